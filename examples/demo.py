"""`make demo`: the main job end to end on the examples that exist so far.

Assemble every example, run it forward to FINISH, run it backward to START and
check that the machine is restored bit for bit, at both word widths.
"""
from __future__ import annotations

from pathlib import Path

from revasm.assembler import assemble_file
from revasm.isa.fixed_point import WordFormat
from revasm.sim.reference import Machine

HERE = Path(__file__).resolve().parent


def main() -> None:
    print(f"{'example':<18} {'W':>3} {'steps':>7} {'cycles':>7}  restored  outputs")
    for path in sorted(HERE.glob("*.pal")):
        for width in (32, 64):
            image = assemble_file(path, width=width)
            fmt = WordFormat(width)
            machine = Machine(image)
            for declared in image.names.values():
                if declared.default is not None:
                    if declared.register is not None:
                        machine.registers[declared.register] = declared.default
                    else:
                        machine.memory[declared.address] = declared.default
            before = machine.snapshot()
            machine.run(direction=1)
            steps, cycles = machine.steps, machine.cycles
            outputs = []
            for name, declared in image.names.items():
                if declared.role in ("output", "loss"):
                    word = (machine.registers[declared.register] if declared.register is not None
                            else machine.memory[declared.address])
                    value = fmt.to_real(word) if declared.fixed else fmt.signed(word)
                    outputs.append(f"{name}={value:.6g}" if declared.fixed else f"{name}={value}")
            machine.direction = -1
            machine.run(direction=-1)
            machine.direction = 1
            restored = machine.snapshot() == before
            print(f"{path.name:<18} {width:>3} {steps:>7} {cycles:>7}  {str(restored):<8}  "
                  + " ".join(outputs))
            if not restored:
                raise SystemExit(f"{path.name}: backward run did not restore the state")


if __name__ == "__main__":
    main()
