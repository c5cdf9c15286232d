"""Tests of revasm.rtl.verification."""
