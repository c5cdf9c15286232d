"""Reports: op counts, cycles, traffic, occupancy, bits erased and energy of a run.

Built on the reference simulator's trace callback (``Machine.run(trace=...)``):
every executed instruction is classified by the ISA table's ``energy_class``,
its register and memory accesses are read off the table's semantics templates,
and energy models kept as JSON data files (``models/``) turn the counts into
joules.  ``build_value_report`` is the entry point; docs/energy.md explains
every count and model.
"""
from .access import TemplateAccess, access_of, adjoint_updates
from .build import ReportError, build_report, build_value_report, gradient_mode_available
from .classes import REPORT_CLASSES, report_class
from .counting import RunCounter, RunCounts
from .energy_models import EnergyModel, ModelError, bundled_models, load_model
from .schema import REPORT_SCHEMA, validate_report

__all__ = ["EnergyModel", "ModelError", "REPORT_CLASSES", "REPORT_SCHEMA", "RunCounter",
           "ReportError", "RunCounts", "TemplateAccess", "access_of", "adjoint_updates",
           "build_report", "build_value_report", "gradient_mode_available",
           "bundled_models", "load_model", "report_class", "validate_report"]
