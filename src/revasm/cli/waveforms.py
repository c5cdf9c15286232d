"""`revasm run --vcd`: the run's waveforms, named and timed as the RTL core's."""
from __future__ import annotations

from revasm.assembler.image import Image, encoding_problem
from revasm.machine import MachineFault

from .errors import ToolError, output_error
from .machine_io import initial_words
from .outputs import atomic_path


def write_waveforms(path: str, image: Image, records: list, sets: tuple[str, ...],
                    mems: tuple[str, ...], *, reverse: bool = False,
                    fault: MachineFault | None = None, load: bool = False) -> None:
    """The run's waveforms as the RTL's (``rtl/verification/waveform.py``), whole or not at all: a
    forward run, or with ``reverse`` a backward one from FINISH, up to its halt or
    ``fault``; from the run pulse on, or with ``load`` from the host's load."""
    problem = encoding_problem(image, "--vcd writes the RTL core's signals; the core",
                               "run without --vcd")
    if problem is not None:
        raise ToolError(f"revasm run: error: {problem}")
    try:
        from revasm.rtl.hardware.params import CoreParams
        from revasm.rtl.verification.waveform import WaveformError, write_vcd
    except ImportError as exc:
        raise ToolError(f"revasm run: error: --vcd writes the RTL core's signals and needs "
                        f"the 'rtl' extra: pip install 'revasm[rtl]' ({exc})") from None
    params = CoreParams(width=image.width)
    registers, memory = initial_words(image, sets, mems,
                                      memory_words=params.memory_map.low_words)
    try:
        with atomic_path(path) as temporary, open(temporary, "w") as out:
            write_vcd(out, image, records, registers, memory, params=params,
                      direction=-1 if reverse else 1, fault=fault, load=load)
    except WaveformError as exc:
        raise ToolError(f"{image.source_file}: error: --vcd: {exc}") from None
    except OSError as exc:
        raise output_error(path, exc) from None
