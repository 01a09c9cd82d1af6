"""What model to fit: :class:`ModelSpec`, a latency family and a structure, validated once.

The structure is the base model plus optional parts (:data:`~rtanalysis.model.spec.PARTS`, a registry: the
CLI's flags, the reference docs and the compatibility rules are all read from it). The structures that can be
fitted are :data:`~rtanalysis.model.spec.STRUCTURES`, simplest first: the order in which ``structure="auto"``
prefers them when PSIS-LOO cannot tell them apart (:mod:`.choice`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import UsageError
from .families import NAMES as FAMILY_NAMES


@dataclass(frozen=True)
class StructurePart:
    """One optional part of the model's structure."""

    summary: str  #: what the part adds and when to use it (the CLI's help, the docs)
    report_clause: str  #: how the report's model paragraph says the part, after the latency model's effects
    normal_only: bool = False  #: needs the normal latency family (its likelihood is written on sufficient statistics)


#: the optional parts of the model's structure, by name (``ModelSpec.parts``)
PARTS: dict[str, StructurePart] = {
    "item_latency": StructurePart(
        "give each item (task id) a time intensity on log-latency, paired with its capability effect, for data "
        "where hard items are also slow (the latency_by_item check flags that)",
        ", and a time intensity per item (task), paired with the item's capability effect", normal_only=True),
    "clock_effects": StructurePart(
        "let each model's capability differ under timed clocks (vs paused) and fit latency to timed decisions "
        "only, for agents that think less when the clock runs (the success-rate check flags the timed rows); "
        "needs paused runs of the same models",
        "; each model's capability has its own effect under timed clocks (against paused) and latency is fitted to "
        "timed decisions only"),
    "latency_by_correctness": StructurePart(
        "labelled data: give content-wrong decisions their own log-latency shift per model x task type, so "
        "timing and the latency counterfactuals use the correct decisions' latency (thinking longer helps: the "
        "latency_by_correctness check flags it)",
        "; content-wrong decisions have their own log-latency shift per model and task type, so timing and the "
        "latency counterfactuals use the latency of correct decisions", normal_only=True),
}
#: the structures that can be fitted, simplest first; a name joins its parts with ``+`` (item time
#: intensities and latency by correctness are not combined: both move a decision's latency mean)
STRUCTURES: tuple[str, ...] = ("base", "item_latency", "clock_effects", "item_latency+clock_effects",
                               "latency_by_correctness", "latency_by_correctness+clock_effects")
#: the latency families a spec may name: the registry's (:data:`.families.NAMES`) or ``auto``
LATENCY_FAMILIES: tuple[str, ...] = ("auto",) + FAMILY_NAMES
#: the value of ``structure`` or ``latency_family`` that asks PSIS-LOO to choose
AUTO = "auto"
#: how the episode field ``ended`` is read: ``read`` (an episode that says its failure ended it survived the
#: decisions before its last and ended at the last: the survival reading) or ``ignore`` (every log taken as
#: the whole episode, the model before the survival reading, kept for comparison)
ENDED_READINGS: tuple[str, ...] = ("read", "ignore")


def parts_of(structure: str) -> frozenset[str]:
    """The parts a structure name is made of (``base``: none)."""
    return frozenset() if structure in ("base", AUTO) else frozenset(structure.split("+"))


def structure_name(parts) -> str:
    """The name of the structure made of ``parts`` (any order); :class:`~rtanalysis.errors.UsageError` if none
    is."""
    wanted = frozenset(parts)
    for name in STRUCTURES:
        if parts_of(name) == wanted:
            return name
    raise UsageError(f"the parts {' + '.join(p for p in PARTS if p in wanted)} cannot be combined; the structures "
                     f"are {', '.join(STRUCTURES)}")


@dataclass(frozen=True)
class ModelSpec:
    """The model to fit: its latency family and its structure.

    Parameters
    ----------
    latency_family
        ``normal`` (log-normal latency, on sufficient statistics), ``t`` (Student-t log-latency),
        ``mixture`` (a fast and a slow log-normal mode) or ``auto`` (chosen by PSIS-LOO on each
        latency cell's order statistics).
    structure
        A name of :data:`~rtanalysis.model.spec.STRUCTURES` (``base``, or parts of
        :data:`~rtanalysis.model.spec.PARTS` joined with ``+``), or ``auto``: every structure the data can
        tell apart is fitted and the simplest that PSIS-LOO cannot beat is kept.

    ended
        ``read`` (default): episodes whose ``ended`` field says their failure ended them are read as ending at
        their last logged decision (the survival reading; logs without the field are read as whole episodes
        either way); ``ignore``: every log is read as the whole episode (the earlier model, for comparison).
    episode_effects
        ``True`` (default): an episode's decisions share a slowness, a random intercept on log-latency whose
        share of the variance (``latency_icc``) is estimated per task type, so misses cluster within episodes
        as they do when a hard state slows the agent for many decisions in a row; normal latency family
        without item time intensities or latency by correctness only (elsewhere decisions stay independent:
        :attr:`episode_latency`); an episode's silences share it too. ``False``: decisions independent given
        their cell (the default model before, for comparison).

    A spec is validated when made: an unknown name or a part that needs the normal latency family
    with another one raises :class:`~rtanalysis.errors.UsageError` (a ``ValueError``).
    :meth:`from_parts` makes one from the parts as flags (the CLI's ``--item-latency`` ...).
    """

    latency_family: str = "normal"
    structure: str = "base"
    ended: str = "read"
    episode_effects: bool = True

    def __post_init__(self):
        if self.ended not in ENDED_READINGS:
            raise UsageError(f"ended must be one of {', '.join(map(repr, ENDED_READINGS))}, got {self.ended!r}")
        if self.latency_family not in LATENCY_FAMILIES:
            raise UsageError(f"latency_family must be one of {', '.join(map(repr, LATENCY_FAMILIES))}, "
                             f"got {self.latency_family!r}")
        if self.structure != AUTO and self.structure not in STRUCTURES:
            raise UsageError(f"structure must be 'auto' or one of {', '.join(map(repr, STRUCTURES))}, "
                             f"got {self.structure!r}")
        normal_only = [p for p in sorted(self.parts) if PARTS[p].normal_only]
        if normal_only and self.latency_family != "normal":
            raise UsageError(f"{' and '.join(normal_only)} need{'s' if len(normal_only) == 1 else ''} "
                             f"latency_family='normal', got {self.latency_family!r}")
        if self.structure == AUTO and self.latency_family == AUTO:
            raise UsageError("structure='auto' needs a fixed latency family (choose it first with "
                             "latency_family='auto', then compare structures with it)")

    @classmethod
    def from_parts(cls, latency_family: str = "normal", structure: str | None = None, ended: str = "read",
                   episode_effects: bool = True, **parts: bool) -> "ModelSpec":
        """A spec from the parts as flags (``item_latency=True``, ...) or a structure name, not both."""
        unknown = sorted(set(parts) - set(PARTS))
        if unknown:
            raise UsageError(f"unknown structure part(s) {unknown}; the parts are {', '.join(PARTS)}")
        chosen = [p for p, on in parts.items() if on]
        if structure is not None and chosen:
            raise UsageError(f"give a structure or its parts ({', '.join(PARTS)}), not both")
        return cls(latency_family, structure if structure is not None else structure_name(chosen), ended,
                   episode_effects)

    @classmethod
    def coerce(cls, spec) -> "ModelSpec":
        """``spec`` as a ModelSpec: ``None`` (the default model), a structure name, or a ModelSpec."""
        if spec is None:
            return cls()
        if isinstance(spec, str):
            return cls(structure=spec)
        if isinstance(spec, cls):
            return spec
        raise UsageError(f"spec must be a ModelSpec, a structure name or None, got {type(spec).__name__}")

    @property
    def parts(self) -> frozenset[str]:
        """The structure's parts (none for ``base`` and ``auto``)."""
        return parts_of(self.structure)

    @property
    def read_ended(self) -> bool:
        """The survival reading of the ``ended`` field is on."""
        return self.ended == "read"

    @property
    def episode_latency(self) -> bool:
        """The episode slowness is in the model: asked for (``episode_effects``), the normal latency family and
        neither item time intensities nor latency by correctness (their terms treat decisions as independent)."""
        return (self.episode_effects and self.latency_family == "normal" and not self.item_latency
                and not self.latency_by_correctness)

    @property
    def item_latency(self) -> bool:
        return "item_latency" in self.parts

    @property
    def clock_effects(self) -> bool:
        return "clock_effects" in self.parts

    @property
    def latency_by_correctness(self) -> bool:
        return "latency_by_correctness" in self.parts

    def to_dict(self) -> dict:
        """The spec as JSON-ready fields (``diagnostics.json``)."""
        return {"latency_family": self.latency_family, "structure": self.structure, "ended": self.ended,
                "episode_effects": self.episode_effects}

    @classmethod
    def from_dict(cls, info: dict) -> "ModelSpec":
        """The spec :meth:`to_dict` wrote."""
        # a fit saved before the survival reading read every log as the whole episode, one saved before
        # episode slowness took decisions as independent
        return cls(info["latency_family"], info["structure"], info.get("ended", "ignore"),
                   bool(info.get("episode_effects", False)))
