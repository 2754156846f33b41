/**
 * Pure: GPU energy, CO2e and cost in words, as a job's GPU summary, the Jobs
 * view, a sweep's results and the usage show them: `0.42 kWh (measured)`,
 * `12 Wh (estimate: share of a whole GPU)`, `180 g CO2e`, `€1.20`. The
 * server measures and prices (`energy_joules`, `co2e_grams`, `cost`); this
 * only writes, and writes CO2e and cost only where the site set its numbers
 * (null otherwise).
 */
import type {
  EnergySource,
  IBackendUsage,
  ICost,
  IJobGpuUsage
} from '../../api/types';
import { formatHours } from '../../components/format';

const JOULES_PER_KWH = 3.6e6;

/** A whole number with thousands grouped: `1,250`. */
function grouped(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

/**
 * An energy as a reader weighs it, as the server's command line writes it:
 * under a tenth of a kWh in Wh (`35 Wh`, `3.5 Wh`, `<0.01 Wh`), then kWh with
 * two decimals (`0.42 kWh`), whole from 10 kWh (`1,250 kWh`).
 */
export function formatEnergy(joules: number): string {
  if (!Number.isFinite(joules) || joules < 0) {
    return '—';
  }
  const kwh = joules / JOULES_PER_KWH;
  if (kwh < 0.1) {
    const wh = kwh * 1000;
    if (wh === 0) {
      return '0 Wh';
    }
    if (wh < 0.01) {
      return '<0.01 Wh';
    }
    return wh < 10 ? `${Number(wh.toPrecision(2))} Wh` : `${Math.round(wh)} Wh`;
  }
  return kwh < 10 ? `${kwh.toFixed(2)} kWh` : `${grouped(kwh)} kWh`;
}

/** `formatEnergy` of kWh (the usage counts in kWh). */
export function formatKwh(kwh: number): string {
  return formatEnergy(kwh * JOULES_PER_KWH);
}

/**
 * Grams of CO2e: one decimal under 10 g (`3.5 g CO2e`), whole grams under a
 * kilogram (`180 g CO2e`), then kilograms with one decimal (`1.3 kg CO2e`).
 */
export function formatCo2e(grams: number): string {
  if (!Number.isFinite(grams) || grams < 0) {
    return '—';
  }
  if (grams < 10) {
    return `${Number(grams.toFixed(1))} g CO2e`;
  }
  if (Math.round(grams) < 1000) {
    return `${Math.round(grams)} g CO2e`;
  }
  const kg = (grams / 1000).toLocaleString('en-US', {
    minimumFractionDigits: 1,
    maximumFractionDigits: 1
  });
  return `${kg} kg CO2e`;
}

/**
 * An amount in the site's currency (`€1.20`, `$0.35`, `CHF 4.00` as the
 * locale writes it); without a currency, the amount alone (`1.20`); under a
 * cent, `<€0.01`. An unknown currency code is written after the amount.
 */
export function formatMoney(
  amount: number,
  currency: string | null,
  locale?: string
): string {
  if (!Number.isFinite(amount) || amount < 0) {
    return '—';
  }
  const format = (value: number): string => {
    const digits = { minimumFractionDigits: 2, maximumFractionDigits: 2 };
    if (!currency) {
      return new Intl.NumberFormat(locale, digits).format(value);
    }
    try {
      return new Intl.NumberFormat(locale, {
        style: 'currency',
        currency,
        ...digits
      }).format(value);
    } catch {
      return `${new Intl.NumberFormat(locale, digits).format(value)} ${currency}`;
    }
  };
  return amount > 0 && amount < 0.005 ? `<${format(0.01)}` : format(amount);
}

/** A cost's amount: `€1.20`. */
export function formatCost(cost: ICost, locale?: string): string {
  return formatMoney(cost.amount, cost.currency, locale);
}

/**
 * What a cost is made of, for a tooltip: `Cost €1.20: GPU time €1.00,
 * energy €0.20`, and its note (what it leaves out).
 */
export function describeCost(cost: ICost, locale?: string): string {
  const money = (v: number) => formatMoney(v, cost.currency, locale);
  const parts = [
    cost.gpu_time !== null ? `GPU time ${money(cost.gpu_time)}` : null,
    cost.energy !== null ? `energy ${money(cost.energy)}` : null
  ].filter(Boolean);
  const line =
    `Cost ${formatCost(cost, locale)}` +
    (parts.length ? `: ${parts.join(', ')}` : '');
  return cost.note ? `${line}\n${cost.note}` : line;
}

/** How the energy was found, in the words shown after it. */
export function energyHow(source: EnergySource | null): string | null {
  switch (source) {
    case 'counter':
      return 'measured';
    case 'power samples':
      return 'from power samples';
    case 'share of a whole GPU':
      return 'estimate: share of a whole GPU';
    default:
      return null;
  }
}

/** `0.42 kWh (measured)`, `12 Wh (estimate: share of a whole GPU)`. */
export function describeEnergy(
  joules: number,
  source: EnergySource | null
): string {
  const how = energyHow(source);
  return formatEnergy(joules) + (how ? ` (${how})` : '');
}

/** The energy facts of a job's GPU summary. */
export type EnergyFacts = Pick<
  IJobGpuUsage,
  'energy_joules' | 'energy_source' | 'energy_note' | 'co2e_grams' | 'cost'
>;

/** A line of energy words and the tooltip that says more. */
export interface IEnergyText {
  text: string;
  title: string;
}

/**
 * A job's energy in its GPU summary: `GPU energy 0.42 kWh (measured) · 180 g
 * CO2e · €1.20`, or `GPU energy not measured` (with its cost where the site
 * prices GPU time); the note and the cost's parts in the tooltip. Null for a
 * job that saw no GPU.
 */
export function jobEnergy(
  gpu: (EnergyFacts & Pick<IJobGpuUsage, 'available'>) | null,
  locale?: string
): IEnergyText | null {
  if (!gpu || !gpu.available) {
    return null;
  }
  const measured = gpu.energy_joules !== null;
  const parts = [
    measured
      ? `GPU energy ${describeEnergy(gpu.energy_joules as number, gpu.energy_source)}`
      : 'GPU energy not measured',
    measured && gpu.co2e_grams !== null ? formatCo2e(gpu.co2e_grams) : null,
    gpu.cost ? formatCost(gpu.cost, locale) : null
  ];
  const title = [
    gpu.energy_note ??
      (measured ? null : 'The GPUs reported neither energy nor power.'),
    gpu.cost ? describeCost(gpu.cost, locale) : null
  ];
  return {
    text: parts.filter(Boolean).join(' · '),
    title: title.filter(Boolean).join('\n')
  };
}

/**
 * A job's Energy cell in the Jobs view: the energy alone (`0.42 kWh`), and
 * in its tooltip how it was found, the CO2e, the cost and the note; an
 * empty cell where nothing was measured (the tooltip says why).
 */
export function energyCell(
  gpu: (EnergyFacts & Pick<IJobGpuUsage, 'available'>) | null,
  locale?: string
): IEnergyText {
  if (!gpu || !gpu.available) {
    return { text: '', title: '' };
  }
  if (gpu.energy_joules === null) {
    return {
      text: '',
      title: ['Not measured', gpu.energy_note].filter(Boolean).join(': ')
    };
  }
  const lines = [
    describeEnergy(gpu.energy_joules, gpu.energy_source),
    gpu.co2e_grams !== null ? formatCo2e(gpu.co2e_grams) : null,
    gpu.cost ? describeCost(gpu.cost, locale) : null,
    gpu.energy_note
  ];
  return {
    text: formatEnergy(gpu.energy_joules),
    title: lines.filter(Boolean).join('\n')
  };
}

/** Whether any GPU energy was measured in a period's usage. */
export function energyMeasured(usage: IBackendUsage): boolean {
  return usage.gpu_hours_energy_measured > 0 || usage.gpu_energy_kwh > 0;
}

/**
 * A backend's energy in the week's usage: `3.40 kWh · 120 g CO2e · €5.00`
 * (CO2e and cost where the site set its numbers), and how much of its
 * GPU time was measured; null where there is nothing to say.
 */
export function backendEnergy(
  usage: IBackendUsage,
  locale?: string
): IEnergyText | null {
  const measured = energyMeasured(usage);
  const parts = [
    measured ? formatKwh(usage.gpu_energy_kwh) : null,
    measured && usage.co2e_grams !== null ? formatCo2e(usage.co2e_grams) : null,
    usage.cost ? formatCost(usage.cost, locale) : null
  ].filter(Boolean);
  if (parts.length === 0) {
    return null;
  }
  const title = [
    measured
      ? `GPU energy measured on ${formatHours(usage.gpu_hours_energy_measured)} ` +
        `of ${formatHours(usage.gpu_hours)} GPU-hours allocated`
      : 'No GPU energy measured',
    usage.cost ? describeCost(usage.cost, locale) : null
  ];
  return { text: parts.join(' · '), title: title.filter(Boolean).join('\n') };
}

/** A week's energy bar's tooltip: `Week of 3 Jun: 3.40 kWh, 120 g CO2e (…)`. */
export function weekEnergyTitle(label: string, usage: IBackendUsage): string {
  if (!energyMeasured(usage)) {
    return `Week of ${label}: no GPU energy measured`;
  }
  const carbon =
    usage.co2e_grams !== null ? `, ${formatCo2e(usage.co2e_grams)}` : '';
  return (
    `Week of ${label}: ${formatKwh(usage.gpu_energy_kwh)}${carbon} ` +
    `(measured on ${formatHours(usage.gpu_hours_energy_measured)} of ` +
    `${formatHours(usage.gpu_hours)} GPU-h)`
  );
}

/** Why the weeks' energy chart has no bar. */
export function describeNoEnergy(weeks: number): string {
  return (
    `No GPU energy measured in the last ${weeks} weeks. Jobs on NVIDIA ` +
    'GPUs whose driver reports energy or power fill this chart as they run.'
  );
}
