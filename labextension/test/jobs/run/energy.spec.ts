/**
 * How GPU energy, CO2e and cost are written: units and precision, how the
 * energy was found, and CO2e and cost only where the site set its numbers.
 */
import type {
  IBackendUsage,
  ICost,
  IJobGpuUsage
} from '../../../src/api/types';
import {
  backendEnergy,
  describeCost,
  describeEnergy,
  describeNoEnergy,
  energyCell,
  energyHow,
  formatCo2e,
  formatEnergy,
  formatKwh,
  formatMoney,
  jobEnergy,
  weekEnergyTitle
} from '../../../src/jobs/run/energy';

const KWH = 3.6e6;

function gpu(fields: Partial<IJobGpuUsage> = {}): IJobGpuUsage {
  return {
    available: true,
    energy_joules: 0.42 * KWH,
    energy_source: 'counter',
    energy_note: null,
    co2e_grams: null,
    cost: null,
    ...fields
  } as IJobGpuUsage;
}

function cost(fields: Partial<ICost> = {}): ICost {
  return {
    amount: 1.2,
    currency: 'EUR',
    gpu_time: 1,
    energy: 0.2,
    note: null,
    ...fields
  };
}

function usage(fields: Partial<IBackendUsage> = {}): IBackendUsage {
  return {
    gpu_hours: 1.5,
    gpu_hours_used: 0.5,
    gpu_hours_measured: 1.5,
    gpu_energy_kwh: 3.4,
    gpu_hours_energy_measured: 1.2,
    co2e_grams: null,
    cost: null,
    cpu_hours: 0,
    jobs: {},
    ...fields
  } as IBackendUsage;
}

describe('energy units', () => {
  it('writes Wh under a tenth of a kWh, kWh above, as the command line does', () => {
    expect(formatEnergy(0)).toBe('0 Wh');
    expect(formatEnergy(1)).toBe('<0.01 Wh');
    expect(formatEnergy(0.0123 * 3600)).toBe('0.012 Wh');
    expect(formatEnergy(3.54 * 3600)).toBe('3.5 Wh');
    expect(formatEnergy(35.4 * 3600)).toBe('35 Wh');
    expect(formatEnergy(99.4 * 3600)).toBe('99 Wh');
    expect(formatEnergy(0.1 * KWH)).toBe('0.10 kWh');
    expect(formatEnergy(0.42 * KWH)).toBe('0.42 kWh');
    expect(formatEnergy(9.5 * KWH)).toBe('9.50 kWh');
    expect(formatEnergy(1250.4 * KWH)).toBe('1,250 kWh');
  });

  it('refuses what is no energy', () => {
    expect(formatEnergy(-1)).toBe('—');
    expect(formatEnergy(Number.NaN)).toBe('—');
  });

  it('takes kWh too', () => {
    expect(formatKwh(3.4)).toBe('3.40 kWh');
    expect(formatKwh(0.035)).toBe('35 Wh');
  });
});

describe('CO2e', () => {
  it('writes grams, then kilograms from 1000 g', () => {
    expect(formatCo2e(0)).toBe('0 g CO2e');
    expect(formatCo2e(0.44)).toBe('0.4 g CO2e');
    expect(formatCo2e(3.46)).toBe('3.5 g CO2e');
    expect(formatCo2e(180.4)).toBe('180 g CO2e');
    expect(formatCo2e(999.4)).toBe('999 g CO2e');
    expect(formatCo2e(999.6)).toBe('1.0 kg CO2e');
    expect(formatCo2e(1300)).toBe('1.3 kg CO2e');
    expect(formatCo2e(1234567)).toBe('1,234.6 kg CO2e');
  });
});

describe('money', () => {
  it("writes the site's currency as the locale does", () => {
    expect(formatMoney(1.2, 'EUR', 'en-US')).toBe('€1.20');
    expect(formatMoney(1.2, 'USD', 'en-US')).toBe('$1.20');
    expect(formatMoney(1.2, 'EUR', 'de-DE')).toMatch(/^1,20\s€$/);
    expect(formatMoney(1234.5, 'EUR', 'en-US')).toBe('€1,234.50');
  });

  it('writes the amount alone without a currency, and an unknown code after it', () => {
    expect(formatMoney(1.2, null, 'en-US')).toBe('1.20');
    expect(formatMoney(1.2, 'NOT A CODE', 'en-US')).toBe('1.20 NOT A CODE');
  });

  it('says under a cent rather than nothing', () => {
    expect(formatMoney(0.001, 'EUR', 'en-US')).toBe('<€0.01');
    expect(formatMoney(0, 'EUR', 'en-US')).toBe('€0.00');
  });

  it('tells what a cost is made of, and what it leaves out', () => {
    expect(describeCost(cost(), 'en-US')).toBe(
      'Cost €1.20: GPU time €1.00, energy €0.20'
    );
    const note = 'The energy was not measured: GPU time only.';
    expect(describeCost(cost({ amount: 1, energy: null, note }), 'en-US')).toBe(
      `Cost €1.00: GPU time €1.00\n${note}`
    );
  });
});

describe("a job's energy", () => {
  it('says how the energy was found', () => {
    expect(energyHow('counter')).toBe('measured');
    expect(energyHow('power samples')).toBe('from power samples');
    expect(energyHow('share of a whole GPU')).toBe(
      'estimate: share of a whole GPU'
    );
    expect(energyHow(null)).toBeNull();
    expect(describeEnergy(0.42 * KWH, 'counter')).toBe('0.42 kWh (measured)');
    expect(describeEnergy(0.12 * KWH, 'share of a whole GPU')).toBe(
      '0.12 kWh (estimate: share of a whole GPU)'
    );
    expect(describeEnergy(0.42 * KWH, null)).toBe('0.42 kWh');
  });

  it('shows CO2e and cost only where the site set them', () => {
    expect(jobEnergy(gpu())).toEqual({
      text: 'GPU energy 0.42 kWh (measured)',
      title: ''
    });
    const priced = jobEnergy(gpu({ co2e_grams: 180, cost: cost() }), 'en-US');
    expect(priced?.text).toBe(
      'GPU energy 0.42 kWh (measured) · 180 g CO2e · €1.20'
    );
    expect(priced?.title).toBe('Cost €1.20: GPU time €1.00, energy €0.20');
  });

  it('gives the note as the tooltip', () => {
    const note = 'A MIG slice: its GPU’s energy times 1/7.';
    expect(
      jobEnergy(
        gpu({
          energy_joules: 0.12 * KWH,
          energy_source: 'share of a whole GPU',
          energy_note: note
        })
      )
    ).toEqual({
      text: 'GPU energy 0.12 kWh (estimate: share of a whole GPU)',
      title: note
    });
    expect(jobEnergy(gpu({ energy_source: 'power samples' }))?.text).toBe(
      'GPU energy 0.42 kWh (from power samples)'
    );
  });

  it('says when it was not measured, with why, and still the GPU time cost', () => {
    const note = 'NVML could not be loaded: no energy.';
    expect(
      jobEnergy(
        gpu({ energy_joules: null, energy_source: null, energy_note: note })
      )
    ).toEqual({ text: 'GPU energy not measured', title: note });
    const charged = jobEnergy(
      gpu({
        energy_joules: null,
        energy_source: null,
        co2e_grams: null,
        cost: cost({ amount: 1, energy: null })
      }),
      'en-US'
    );
    expect(charged?.text).toBe('GPU energy not measured · €1.00');
    expect(charged?.title).toBe(
      'The GPUs reported neither energy nor power.\nCost €1.00: GPU time €1.00'
    );
  });

  it('says nothing for a job that saw no GPU', () => {
    expect(jobEnergy(null)).toBeNull();
    expect(
      jobEnergy(gpu({ available: false, energy_joules: null }))
    ).toBeNull();
  });

  it("fills the Jobs view's cell with the energy alone, the rest in its tooltip", () => {
    expect(energyCell(gpu({ co2e_grams: 180, cost: cost() }), 'en-US')).toEqual(
      {
        text: '0.42 kWh',
        title:
          '0.42 kWh (measured)\n180 g CO2e\nCost €1.20: GPU time €1.00, energy €0.20'
      }
    );
    expect(
      energyCell(gpu({ energy_joules: null, energy_note: 'No counter.' }))
    ).toEqual({ text: '', title: 'Not measured: No counter.' });
    expect(energyCell(null)).toEqual({ text: '', title: '' });
  });
});

describe("the week's energy", () => {
  it("writes a backend's kWh, with CO2e and cost where set", () => {
    expect(backendEnergy(usage())).toEqual({
      text: '3.40 kWh',
      title: 'GPU energy measured on 1.2 of 1.5 GPU-hours allocated'
    });
    expect(
      backendEnergy(
        usage({ co2e_grams: 408, cost: cost({ amount: 5 }) }),
        'en-US'
      )?.text
    ).toBe('3.40 kWh · 408 g CO2e · €5.00');
  });

  it('says nothing where nothing was measured or priced', () => {
    const none = usage({ gpu_energy_kwh: 0, gpu_hours_energy_measured: 0 });
    expect(backendEnergy(none)).toBeNull();
    // CO2e of nothing measured is not shown; a GPU time cost still is.
    expect(
      backendEnergy(
        { ...none, co2e_grams: 0, cost: cost({ amount: 2 }) },
        'en-US'
      )
    ).toEqual({
      text: '€2.00',
      title: 'No GPU energy measured\nCost €2.00: GPU time €1.00, energy €0.20'
    });
  });

  it("titles a week's bar and says why the chart is empty", () => {
    expect(weekEnergyTitle('3 Jun', usage({ co2e_grams: 408 }))).toBe(
      'Week of 3 Jun: 3.40 kWh, 408 g CO2e (measured on 1.2 of 1.5 GPU-h)'
    );
    expect(
      weekEnergyTitle(
        '3 Jun',
        usage({ gpu_energy_kwh: 0, gpu_hours_energy_measured: 0 })
      )
    ).toBe('Week of 3 Jun: no GPU energy measured');
    expect(describeNoEnergy(8)).toMatch(
      /^No GPU energy measured in the last 8 weeks\./
    );
  });
});
