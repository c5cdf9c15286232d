"""Tests of revasm.rtl.hardware."""
