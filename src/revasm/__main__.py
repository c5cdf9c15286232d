"""``python -m revasm``: the command line."""
from revasm.launch import main

main()
