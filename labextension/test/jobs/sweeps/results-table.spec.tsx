/**
 * A sweep's results table: each run's GPU energy as a column (CO2e and cost
 * beside it only where a run has them), sorted like the others, so which
 * value of a parameter cost least is one click.
 */
import { fireEvent, render, screen } from '@testing-library/react';
import React from 'react';

import type { ISweepResults, ISweepRow } from '../../../src/api/types';
import { Table } from '../../../src/jobs/sweeps/results-table';
import { sweep } from '../../records';

const KWH = 3.6e6;

function run(index: number, fields: Partial<ISweepRow>): ISweepRow {
  return {
    index,
    job_id: `r${index}`,
    state: 'succeeded',
    duration_seconds: 60,
    energy_joules: null,
    co2e_grams: null,
    cost: null,
    parameters: { alpha: index + 1 },
    values: {},
    cut: [],
    note: null,
    output_path: `jobs/r${index}/out.ipynb`,
    ...fields
  };
}

function results(rows: ISweepRow[]): ISweepResults {
  return {
    group: sweep(),
    parameter_columns: ['alpha'],
    value_columns: [],
    rows,
    cut: false
  };
}

function renderTable(rows: ISweepRow[]): HTMLElement {
  render(<Table results={results(rows)} runAgain={() => Promise.resolve()} />);
  return screen.getByTestId('gpu-env-sweep-table');
}

const heads = (table: HTMLElement): string[] =>
  Array.from(table.querySelectorAll('th[data-column]')).map(
    th => (th as HTMLElement).dataset.column as string
  );

const cells = (table: HTMLElement, key: string): string[] =>
  Array.from(
    table.querySelectorAll(
      `[data-testid="gpu-env-sweep-row"] td[data-column="${key}"]`
    )
  ).map(td => td.textContent ?? '');

describe('the results table', () => {
  it('has an energy column, and no CO2e or cost where no run has them', () => {
    const table = renderTable([
      run(0, { energy_joules: 0.42 * KWH }),
      run(1, { energy_joules: null })
    ]);
    expect(heads(table)).toEqual(['p:alpha', 'state', 'duration', 'energy']);
    expect(cells(table, 'energy')).toEqual(['0.42 kWh', '']);
    const missing = table.querySelectorAll('td[data-column="energy"]')[1];
    expect((missing as HTMLElement).title).toBe('Not measured');
  });

  it('adds CO2e and cost where the site set them', () => {
    const cost = (amount: number) => ({
      amount,
      currency: 'EUR',
      gpu_time: amount - 0.1,
      energy: 0.1,
      note: null
    });
    const table = renderTable([
      run(0, { energy_joules: 0.5 * KWH, co2e_grams: 200, cost: cost(1.5) }),
      run(1, { energy_joules: 0.2 * KWH, co2e_grams: 80, cost: cost(0.6) }),
      run(2, { energy_joules: null, co2e_grams: null, cost: cost(0.4) })
    ]);
    expect(heads(table)).toEqual([
      'p:alpha',
      'state',
      'duration',
      'energy',
      'co2e',
      'cost'
    ]);
    expect(cells(table, 'co2e')).toEqual(['200 g CO2e', '80 g CO2e', '']);
    expect(cells(table, 'cost')[0]).toMatch(/1[.,]50/);
    const first = table.querySelector('td[data-column="cost"]') as HTMLElement;
    expect(first.title).toMatch(/^Cost .*: GPU time .*, energy /);

    // Which alpha cost least: one click on the energy column.
    const sortBy = (key: string) =>
      fireEvent.click(
        table.querySelector(`th[data-column="${key}"] button`) as HTMLElement
      );
    sortBy('energy');
    expect(cells(table, 'p:alpha')).toEqual(['2', '1', '3']);
    sortBy('energy');
    // Descending; the run without energy stays last.
    expect(cells(table, 'p:alpha')).toEqual(['1', '2', '3']);
    sortBy('cost');
    expect(cells(table, 'p:alpha')).toEqual(['3', '2', '1']);
  });
});
