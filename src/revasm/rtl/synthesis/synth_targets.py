"""The FPGA parts ``revasm rtl synth`` targets, and how each family's cells are counted.

A target names a real device and package: the yosys command that maps the design onto
its cells (``synth_ice40``, ``synth_ecp5``), and the nextpnr tool and arguments that place
and route it there.  The capacities in each summary are the data sheets' (Lattice iCE40
LP/HX family DS1040, ECP5 family DS1044) and are what nextpnr reports as available.

Cells count differently per family (:func:`count_cells`):

- iCE40: a logic cell holds one LUT4 (``SB_LUT4``) and one carry (``SB_CARRY``), so LUT4
  is the ``SB_LUT4`` count; block RAM ``SB_RAM40_4K`` (4 kbit), DSP ``SB_MAC16``.
- ECP5: a slice holds two LUT4s.  An adder is ``CCU2C`` cells, each two LUT4s with their
  carry, so LUT4 is ``LUT4`` + 2 x ``CCU2C`` + 6 x ``TRELLIS_DPR16X4`` (a 16 x 4
  distributed RAM takes three slices: two hold the bits, the third its write port, DS1044
  "distributed RAM"; nextpnr placed 8 of them in 49 of its LUT positions beside 9 logic
  LUT4); the wide-function muxes ``PFUMX``/``L6MUX21`` sit beside the LUTs and take none.
  Block RAM ``DP16KD`` and ``PDPW16KD`` (18 kbit), DSP ``MULT18X18D`` (and ``ALU54B``),
  flip-flops ``TRELLIS_FF``.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Target:
    """One ``--target``: a device in a package, or ``generic`` (yosys's own cells)."""

    name: str
    #: "ice40", "ecp5" or "generic"
    family: str
    #: the part as ordered (device, speed grade, package), or "" for generic
    device: str
    #: the yosys command that maps onto the family's cells
    synth_command: str
    #: nextpnr's arguments naming the device, package and speed grade; () = not placed
    device_args: tuple[str, ...]
    #: the data sheet's LUT4 (iCE40: logic cells), block RAMs and DSPs; 0 = not limited
    luts: int = 0
    brams: int = 0
    dsps: int = 0
    #: the package's user I/O pins (nextpnr's SB_IO / TRELLIS_IO count); 0 = not placed
    io_pins: int = 0

    @property
    def capacity(self) -> str:
        """The device's resources in words, for --help."""
        if not self.luts:
            return "yosys's generic cells, not placed"
        bram, dsp = ("SB_RAM40_4K", "SB_MAC16") if self.family == "ice40" else \
            ("DP16KD", "MULT18X18D")
        return f"{self.luts} LUT4, {self.brams} {bram}, {self.dsps or 'no'} {dsp}"

    def over_capacity(self, counts: CellCounts) -> str | None:
        """What the counts need beyond the data sheet's resources, or None.  nextpnr's
        model of an LFE5U-12F is the 25F die it is cut from (24288 LUT4, 56 DP16KD), so
        a design it places there may still not fit the part as sold."""
        over = [f"{need} {what} of {have}" for need, have, what in (
            (counts.lut4, self.luts, "LUT4"), (counts.bram, self.brams, "block RAMs"),
            (counts.dsp, self.dsps, "DSPs")) if self.luts and need > have]
        return ", ".join(over) if over else None

    @property
    def nextpnr(self) -> str | None:
        """The place-and-route tool (a yowasp package and executable), if any."""
        return f"yowasp-nextpnr-{self.family}" if self.device_args else None

    def pnr_args(self, netlist: str, report: str, freq_mhz: float) -> list[str]:
        """nextpnr's command line: the device, the netlist, unconstrained pins (the pin
        wrapper's few), the clock target (``--freq``; a slower design is still routed
        and its fmax reported), the JSON report and a fixed seed (repeatable runs)."""
        pins = "--pcf-allow-unconstrained" if self.family == "ice40" \
            else "--lpf-allow-unconstrained"
        return [*self.device_args, "--json", netlist, pins, "--freq", f"{freq_mhz:g}",
                "--timing-allow-fail", "--report", report, "--seed", "1"]


def _ecp5(size: str, luts: int, brams: int, dsps: int) -> Target:
    # Speed grade 6 (the slowest, so fmax is what every part of the type reaches) and the
    # 381-ball caBGA, a package every ECP5 size comes in (12F through 85F); its user I/O
    # as the 12F and 25F have it (197, nextpnr's TRELLIS_IO), the fewest of the sizes.
    return Target(f"ecp5-{size}k", "ecp5", f"LFE5U-{size}F-6BG381C", "synth_ecp5",
                  (f"--{size}k", "--package", "CABGA381", "--speed", "6"), luts, brams, dsps,
                  197)


TARGETS: dict[str, Target] = {target.name: target for target in (
    Target("ice40-hx8k", "ice40", "iCE40HX8K-CT256", "synth_ice40", ("--hx8k", "--package",
           "ct256"), 7680, 32, 0, 206),
    Target("ice40-up5k", "ice40", "iCE40UP5K-SG48", "synth_ice40 -dsp", ("--up5k", "--package",
           "sg48"), 5280, 30, 8, 39),
    _ecp5("12", 12288, 32, 28),
    _ecp5("25", 24288, 56, 28),
    _ecp5("45", 43848, 108, 72),
    _ecp5("85", 83640, 208, 156),
    Target("generic", "generic", "", "synth", ()),
)}


def target(name: str) -> Target:
    """The target called ``name``; ValueError naming the known ones otherwise."""
    try:
        return TARGETS[name]
    except KeyError:
        raise ValueError(f"unknown target {name!r} (one of {', '.join(TARGETS)})") from None


@dataclass(frozen=True)
class CellCounts:
    """LUT4, flip-flops, block RAMs, DSPs and carry cells of a synthesised netlist."""

    lut4: int
    ff: int
    bram: int
    dsp: int
    carry: int


#: yosys's own flip-flop cells, which the generic target leaves in the netlist
_GENERIC_FLOPS = ("$dff", "$_DFF_P_", "$adff", "$dffe", "$sdff")


def count_cells(family: str, cells: dict[str, int]) -> CellCounts:
    """The figures of a ``stat -json`` cell count (``num_cells_by_type``) for ``family``."""
    if family == "ecp5":
        carry = cells.get("CCU2C", 0)
        return CellCounts(
            lut4=cells.get("LUT4", 0) + 2 * carry + 6 * cells.get("TRELLIS_DPR16X4", 0),
            ff=cells.get("TRELLIS_FF", 0),
            bram=cells.get("DP16KD", 0) + cells.get("PDPW16KD", 0),
            dsp=cells.get("MULT18X18D", 0) + cells.get("ALU54B", 0), carry=carry)
    return CellCounts(
        lut4=cells.get("SB_LUT4", cells.get("$lut", 0)),
        ff=sum(n for name, n in cells.items()
               if name.startswith("SB_DFF") or name in _GENERIC_FLOPS),
        bram=sum(n for name, n in cells.items() if name.startswith("SB_RAM")),
        dsp=cells.get("SB_MAC16", 0), carry=cells.get("SB_CARRY", 0))
