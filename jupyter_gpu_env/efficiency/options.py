"""What a run costs, in the site's numbers: the ``c.GpuEnvApp.*`` options for carbon and money. Declared
here, beside what uses them; ``GpuEnvOptions`` is made of them, so they are set and documented as every
other option of ``GpuEnvApp``. Unset, nothing is shown: the extension invents no carbon intensity and no
price (docs/admin-gpu-efficiency.md gives typical values with their sources; the site must choose).
"""

from __future__ import annotations

from traitlets import Float, Unicode
from traitlets.config import Configurable

from ..gpu.energy import SitePrices


class EnergyOptions(Configurable):
    """Carbon intensity, PUE, prices and currency: a job's measured GPU energy turned into CO2e and cost."""

    carbon_intensity = Float(
        None,
        allow_none=True,
        min=0.0,
        config=True,
        help="Grams of CO2-equivalent per kWh of the electricity the GPUs draw: the grid's average where "
        "the machines are (electricityMaps, Ember, the national grid operator), or the supplier's contract "
        "figure. Jobs' energy is shown in kWh with CO2e = kWh x pue x this. Unset (the default): no carbon "
        "is shown.",
    )
    pue = Float(
        1.0,
        min=1.0,
        max=5.0,
        config=True,
        help="Power usage effectiveness of the data centre (its total energy over its IT equipment's), "
        "applied to the GPUs' measured energy for carbon and energy cost. 1.0 (the default): the GPUs' own "
        "energy only; the Uptime Institute's survey average was 1.58 in 2023 (docs/admin-gpu-efficiency.md "
        "gives sources).",
    )
    gpu_hour_price = Float(
        None,
        allow_none=True,
        min=0.0,
        config=True,
        help="What one GPU-hour allocated costs, in `currency` (a MIG slice counts its share of the GPU). "
        "A job's cost is its GPU-hours allocated x this + its kWh x pue x energy_price. Unset (the "
        "default): no GPU-time part.",
    )
    energy_price = Float(
        None,
        allow_none=True,
        min=0.0,
        config=True,
        help="What one kWh costs, in `currency`, times pue for the facility's share. Unset (the default): "
        "no energy part.",
    )
    currency = Unicode(
        "",
        config=True,
        help="The prices' currency as costs show it, an ISO 4217 code (EUR, USD, CHF...); empty: amounts "
        "are shown without one.",
    )

    def site_prices(self) -> SitePrices:
        """These options as the arithmetic takes them (gpu/energy.py)."""
        return SitePrices(
            carbon_intensity=self.carbon_intensity,
            pue=self.pue,
            gpu_hour_price=self.gpu_hour_price,
            energy_price=self.energy_price,
            currency=self.currency.strip() or None,
        )
