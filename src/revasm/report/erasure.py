"""Bits erased: the reversible run, the same computation irreversibly, and tape AD.

All counts are in bits of W-bit words (docs/energy.md, "Bits erased").  Every
scenario includes the results (and, in gradient mode, the gradients) copied
out of the machine, which the host eventually erases whatever computed them.

* ``reversible`` — the protocol "run forward, copy the results out, run
  backward": the machine returns to its initial state, so it erases only what
  leaves it: the results copied out, the words EMIT moved onto the output tape,
  and, after a fault, every word that differs from the initial state (the
  machine must be reset).
* ``reversible_forward_only`` — the same without the backward run: the garbage
  left at FINISH (every word that differs from the initial state) is erased to
  reuse the machine.
* ``irreversible`` — an ordinary machine doing the same forward computation
  overwrites each destination word (W bits each); an exchange goes through one
  temporary (one word).
* ``tape`` — store-all reverse-mode AD (Griewank & Walther, *Evaluating
  Derivatives*, 2nd ed. 2008, ch. 4 and 12; Tapenade's PUSH/POP): the forward
  sweep pushes every overwritten word onto a tape (W bits) and one bit per
  conditional branch; the reverse sweep pops them all back (erasing the words
  they overwrite) and accumulates adjoints in place (W bits per update).
"""
from __future__ import annotations

from collections.abc import Sequence


def changed_words(before: tuple[Sequence[int], Sequence[int]],
                  after: tuple[Sequence[int], Sequence[int]]) -> set[tuple[str, int]]:
    """Registers (``("r", i)``) and memory words (``("m", a)``) that differ."""
    registers_before, memory_before = before
    registers_after, memory_after = after
    changed = {("r", i) for i, (x, y) in enumerate(zip(registers_before, registers_after))
               if x != y}
    changed |= {("m", a) for a, (x, y) in enumerate(zip(memory_before, memory_after)) if x != y}
    return changed


def erasure_report(*, width: int, forward: dict, results_words: int, gradient_words: int,
                   emitted_words: int, garbage_words: int, fault_words: int) -> dict:
    """Bits stored and erased in each scenario, with their parts."""
    out_bits = width * (results_words + gradient_words)
    reversible_parts = {"results_copied_out": width * results_words,
                        "gradients_copied_out": width * gradient_words,
                        "emitted": width * emitted_words,
                        "fault_reset": width * fault_words}
    forward_only_parts = {"results_copied_out": width * results_words,
                          "gradients_copied_out": width * gradient_words,
                          "emitted": width * emitted_words,
                          "garbage_at_finish": width * garbage_words}
    irreversible_parts = {"overwritten_words": width * forward["irreversible_overwrites"],
                          "results_copied_out": width * results_words,
                          "gradients_copied_out": width * gradient_words}
    tape_values = width * forward["tape_words"]
    tape_control = forward["branches"]["conditional"]
    tape_parts = {"tape_values_popped": tape_values, "tape_control_bits": tape_control,
                  "adjoint_updates": width * forward["adjoint_updates"],
                  "results_copied_out": width * results_words,
                  "gradients_copied_out": width * gradient_words}
    scenarios = {
        "reversible": {"bits_erased": sum(reversible_parts.values()),
                       "bits_stored": 0, "parts": reversible_parts},
        "reversible_forward_only": {"bits_erased": sum(forward_only_parts.values()),
                                    "bits_stored": 0, "parts": forward_only_parts},
        "irreversible": {"bits_erased": sum(irreversible_parts.values()), "bits_stored": 0,
                         "parts": irreversible_parts},
        "tape": {"bits_erased": sum(tape_parts.values()),
                 "bits_stored": tape_values + tape_control, "parts": tape_parts},
    }
    return {"word_bits": width, "results_words": results_words,
            "gradient_words": gradient_words, "copied_out_bits": out_bits,
            "scenarios": scenarios}
