"""``python -m revasm``: the command line."""
from revasm.cli.main import main

main()
