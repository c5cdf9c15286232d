"""The machine's cycles, defined once: the core's schedule and its units' timing.

Every simulator counts cycles from here and the RTL is built with these constants, so a
cycle count means the same number everywhere: the clock cycles the RTL core takes.

* :mod:`.units` -- the multi-cycle units' constants (multiplier and divider steps,
  CORDIC iteration, the function unit's two-cycle states) and the cycles of one unit
  call from its operands;
* :mod:`.microcode` -- the gradient unit's micro-program of every gradient-mode step;
* :mod:`.schedule` -- the core's per-instruction schedule (FETCH .. NEXT, WRITEB, unit
  calls, micro-programs) and :func:`step_timing`, an entry's cycles split into a fixed
  part and the unit calls whose cycles depend on their operands.

Plain Python: no Amaranth here (the RTL imports this package, never the other way).
"""
from .schedule import (
    BASE_CYCLES,
    FIRST_COMMIT,
    STATES,
    TIMER_PREFIX,
    NotTimed,
    StepShape,
    StepTiming,
    TimedCall,
    UnitCall,
    step_cycles,
    step_shape,
    step_timing,
    timer_names,
    traced_calls,
    traced_cycles,
    word_entry,
)
from .units import (
    CORDIC_ITERATION_CYCLES,
    FUNCTION_OPS,
    MULDIV_OPS,
    TAN_POLE_WINDOW,
    TIMING_ARGUMENTS,
    TWO_CYCLE_STATES,
    UNIT_CALLS,
    CallCosts,
    call_costs,
    call_cycle_range,
    call_cycles,
    call_timer,
    divider_steps,
    fixed_call_cycles,
    function_unit_cycles,
    log_mantissa_is_one,
    muldiv_cycles,
    multiplier_steps,
    product_steps,
    quotient_steps,
    rotation_turns,
    tan_divides,
)

__all__ = [
    "BASE_CYCLES", "CORDIC_ITERATION_CYCLES", "CallCosts", "FIRST_COMMIT", "FUNCTION_OPS",
    "MULDIV_OPS", "NotTimed", "STATES", "StepShape", "StepTiming", "TAN_POLE_WINDOW",
    "TIMER_PREFIX", "TIMING_ARGUMENTS", "TWO_CYCLE_STATES", "TimedCall", "UNIT_CALLS",
    "UnitCall", "call_costs", "call_cycle_range", "call_cycles", "call_timer",
    "divider_steps", "fixed_call_cycles", "function_unit_cycles", "log_mantissa_is_one",
    "muldiv_cycles", "multiplier_steps", "product_steps", "quotient_steps",
    "rotation_turns", "step_cycles", "step_shape", "step_timing", "tan_divides",
    "timer_names", "traced_calls", "traced_cycles", "word_entry",
]
