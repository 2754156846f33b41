"""The advice in one line, as the send dialog and the GPU panel show it."""

from __future__ import annotations

from ..models.gpu.advice import SuggestedResources

_VOWEL_SOUNDS = set("AEFHILMNORSX")  # letters whose names start with a vowel sound: "an H100", "a T4"


def gpu_short_name(name: str | None) -> str | None:
    """``NVIDIA H100 80GB HBM3`` -> ``H100``; ``NVIDIA A100-SXM4-80GB`` -> ``A100``; a MIG device's name
    (``NVIDIA H100 80GB HBM3 MIG 1g.10gb``) -> its GPU's."""
    if not name:
        return None
    words = name.replace("NVIDIA", "").replace("Tesla", "").split()
    if not words:
        return None
    return words[0].split("-")[0] or None


def with_article(short: str) -> str:
    return ("an " if short[:1].upper() in _VOWEL_SOUNDS else "a ") + short


def size(n: int) -> str:
    """Bytes in decimal gigabytes, as GPU makers and MIG profiles count them."""
    gb = n / 1e9
    return f"{gb:.1f} GB" if gb < 100 else f"{gb:.0f} GB"


def energy_text(joules: float) -> str:
    """``0.42 kWh``, ``35 Wh``, ``1,250 kWh``: an energy as a reader weighs it."""
    kwh = joules / 3.6e6
    if kwh < 0.1:
        return f"{kwh * 1000:.2g} Wh" if kwh * 1000 < 10 else f"{kwh * 1000:.0f} Wh"
    return f"{kwh:.2f} kWh" if kwh < 10 else f"{kwh:,.0f} kWh"


def carbon_text(grams: float) -> str:
    """``105 g CO2e``, ``1.3 kg CO2e``."""
    return f"{grams:.0f} g CO2e" if grams < 1000 else f"{grams / 1000:,.1f} kg CO2e"


def energy_sentence(joules: float, runs: int, co2e_grams: float | None, estimated: bool) -> str:
    """``A run takes about 0.42 kWh (105 g CO2e), the median of the last 3.``"""
    carbon = f" ({carbon_text(co2e_grams)})" if co2e_grams is not None else ""
    of = "as the last one did" if runs == 1 else f"the median of the last {runs}"
    share = " (a share of a whole GPU's energy)" if estimated else ""
    return f"A run takes about {energy_text(joules)}{carbon}{share}, {of}."


def same_size(a: SuggestedResources | None, b: SuggestedResources | None) -> bool:
    """The same slice or number of GPUs (however their memory was learned)."""
    return a is not None and b is not None and (a.mig_profile, a.gpus) == (b.mig_profile, b.gpus)


def offer_words(s: SuggestedResources) -> str:
    if s.mig_profile:
        return f"a {s.mig_profile} slice"
    if s.gpus == 0:
        return "no GPU"
    return "one whole GPU" if s.gpus == 1 else f"{s.gpus} whole GPUs"


def measured_what(runs: int, kernel: bool) -> str:
    """Whose use was measured, as the sentence's subject."""
    if runs == 0:
        return "The kernel open on it"
    subject = "The last run" if runs == 1 else f"The last {runs} runs"
    return subject + (" and its open kernel" if kernel else "")


def sentence(
    *,
    subject: str,
    peak_bytes: int,
    device: str | None,
    mean_utilization: float | None,
    suggestion: SuggestedResources | None,
    headroom: float,
    backend: str,
    current: SuggestedResources | None,
    idle_percent: float | None,
) -> str:
    """``The last 3 runs peaked at 3.1 GB and used 23 % of an H100: a 1g.10gb slice fits; a whole GPU
    would sit idle 77 % of the time.``"""
    short = gpu_short_name(device)
    held = (
        f"peaked at {size(peak_bytes)}" if subject != "The kernel open on it" else f"holds {size(peak_bytes)}"
    )
    if peak_bytes == 0:
        return f"{subject} used no GPU memory: send it without a GPU."
    if mean_utilization is not None and short:
        held += f" and used {mean_utilization:.0f} % of {with_article(short)}"
    elif short:
        held += f" of {with_article(short)}"
    if suggestion is None:
        return (
            f"{subject} {held}: nothing the '{backend}' backend offers holds that with "
            f"{headroom:.0%} headroom."
        )
    if same_size(current, suggestion):
        return f"{subject} {held}: {offer_words(suggestion)} is already the smallest that fits."
    text = f"{subject} {held}: {offer_words(suggestion)} fits"
    if idle_percent is not None and suggestion.mig_profile:
        text += f"; a whole GPU would sit idle {idle_percent:.0f} % of the time"
    return text + "."
