/**
 * The week's usage: each backend's GPU energy beside its GPU-hours (CO2e
 * where the site set a carbon intensity), and the weeks' chart as
 * GPU-hours or kWh.
 */
import { fireEvent, render, screen, within } from '@testing-library/react';
import React from 'react';

import type {
  IBackendUsage,
  IUsageReport,
  IUsageWeeks
} from '../../../src/api/types';
import { JobsClient } from '../../../src/jobs/client';
import { UsagePanel } from '../../../src/jobs/usage/chart';
import { NOW } from '../../records';

function usage(fields: Partial<IBackendUsage> = {}): IBackendUsage {
  return {
    gpu_hours: 1.5,
    gpu_hours_used: 0.5,
    gpu_hours_measured: 1.5,
    gpu_energy_kwh: 0,
    gpu_hours_energy_measured: 0,
    co2e_grams: null,
    cost: null,
    cpu_hours: 0.2,
    jobs: { succeeded: 2 },
    ...fields
  };
}

function report(backends: Record<string, IBackendUsage>): IUsageReport {
  return {
    period_start: NOW - 86400,
    period_end: NOW,
    backends,
    total: usage()
  } as IUsageReport;
}

function weeks(kwh: number[]): IUsageWeeks {
  return {
    weeks: kwh.map((k, i) => ({
      week_start: NOW - (kwh.length - i) * 7 * 86400,
      backends: {},
      total: usage({ gpu_energy_kwh: k, gpu_hours_energy_measured: k ? 1 : 0 })
    }))
  };
}

const client = {} as JobsClient;

describe('the usage panel', () => {
  it("shows a backend's energy where it was measured, with its CO2e", () => {
    render(
      <UsagePanel
        usage={report({
          slurm: usage({
            gpu_energy_kwh: 3.4,
            gpu_hours_energy_measured: 1.2,
            co2e_grams: 408
          }),
          local: usage()
        })}
        weeks={null}
        client={client}
      />
    );
    const list = screen.getByTestId('gpu-env-usage-backends');
    const slurm = list.querySelector('[data-backend="slurm"]') as HTMLElement;
    const energy = within(slurm).getByTestId('gpu-env-usage-energy');
    expect(energy.textContent).toBe('3.40 kWh · 408 g CO2e');
    expect(energy.title).toBe(
      'GPU energy measured on 1.2 of 1.5 GPU-hours allocated'
    );
    const local = list.querySelector('[data-backend="local"]') as HTMLElement;
    expect(within(local).queryByTestId('gpu-env-usage-energy')).toBeNull();
  });

  it('charts the weeks as GPU-hours, or as kWh', () => {
    render(
      <UsagePanel
        usage={report({})}
        weeks={weeks([0, 1.5, 3])}
        client={client}
      />
    );
    const chart = () => screen.getByTestId('gpu-env-usage-weeks');
    const hours = screen.getByTestId('gpu-env-usage-measure-hours');
    const energy = screen.getByTestId('gpu-env-usage-measure-energy');
    expect(hours.getAttribute('aria-pressed')).toBe('true');
    expect(
      chart().querySelectorAll('rect.jp-GpuEnv-weekAllocated')
    ).toHaveLength(3);
    fireEvent.click(energy);
    expect(energy.getAttribute('aria-pressed')).toBe('true');
    expect(chart().dataset.measure).toBe('energy');
    const bars = chart().querySelectorAll('rect.jp-GpuEnv-weekEnergy');
    expect(bars).toHaveLength(3);
    expect(Number(bars[2].getAttribute('height'))).toBeGreaterThan(
      Number(bars[1].getAttribute('height'))
    );
    expect(chart().textContent).toContain('kWh per week, up to 3.00 kWh');
    expect(chart().querySelectorAll('title')[2].textContent).toMatch(
      /: 3\.00 kWh \(measured on 1\.0 of 1\.5 GPU-h\)$/
    );
  });

  it('says why the energy chart is empty', () => {
    render(
      <UsagePanel usage={report({})} weeks={weeks([0, 0])} client={client} />
    );
    fireEvent.click(screen.getByTestId('gpu-env-usage-measure-energy'));
    expect(screen.getByTestId('gpu-env-usage-weeks-empty').textContent).toMatch(
      /^No GPU energy measured in the last 2 weeks\./
    );
  });
});
