"""Tests of revasm.rtl.synthesis."""
