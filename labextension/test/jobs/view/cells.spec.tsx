/**
 * The Jobs view's rows that stand for several: a sweep's (its runs) and a
 * pipeline's (its nodes), each with its caret, its name and what it counts,
 * its facts and its actions.
 */
import { fireEvent, render, screen, within } from '@testing-library/react';
import React from 'react';

import type { IJob } from '../../../src/api/types';

import { JobActions } from '../../../src/jobs/actions';
import { JobCommandIDs } from '../../../src/jobs/command-ids';
import { JobTableRow, SweepTableRow } from '../../../src/jobs/view/cells';
import {
  jobFacts,
  pipelineFacts,
  sweepFacts
} from '../../../src/jobs/view/rows';
import { PipelineCommandIDs } from '../../../src/pipelines/command-ids';
import { PipelineRows } from '../../../src/pipelines/cells';
import { expansion, recordingCommands } from '../../fakes';
import { NOW, gpuUsage, job, pipeline, sweep } from '../../records';

function table(row: JSX.Element): JSX.Element {
  return (
    <table>
      <tbody>{row}</tbody>
    </table>
  );
}

/** The cells' columns, the toggle and actions cells by their class. */
function columns(row: HTMLElement): string[] {
  return Array.from(row.querySelectorAll('td')).map(
    td => td.dataset.column ?? td.className
  );
}

/** The columns every row of the table has, in order. */
const COLUMNS = [
  'jp-GpuEnv-jobsToggle',
  'name',
  'state',
  'backend',
  'queue',
  'started',
  'duration',
  'gpu',
  'energy',
  'parameters',
  'jp-GpuEnv-jobsActions'
];

describe('JobTableRow', () => {
  function renderJob(gpu: IJob['gpu']): HTMLElement {
    const { commands } = recordingCommands([]);
    const model = { isBusy: () => false, client: {} };
    const actions = { commands, model } as unknown as JobActions;
    const record = job({ state: 'succeeded', finished_at: NOW - 60, gpu });
    render(
      table(
        <JobTableRow
          job={record}
          facts={jobFacts(record, NOW)}
          actions={actions}
          now={NOW}
        />
      )
    );
    return screen.getByTestId('gpu-env-jobs-row');
  }

  const energy = (row: HTMLElement): HTMLElement =>
    row.querySelector('td[data-column="energy"]') as HTMLElement;

  it('shows the energy in its column, CO2e and cost in its tooltip', () => {
    const row = renderJob(
      gpuUsage({
        co2e_grams: 180,
        cost: {
          amount: 1.2,
          currency: 'EUR',
          gpu_time: 1,
          energy: 0.2,
          note: null
        }
      })
    );
    expect(columns(row)).toEqual(COLUMNS);
    expect(energy(row).textContent).toBe('0.42 kWh');
    expect(energy(row).title).toMatch(
      /^0\.42 kWh \(measured\)\n180 g CO2e\nCost .*1\.20: GPU time/
    );
  });

  it('leaves the cell empty where nothing was measured, and says why', () => {
    const row = renderJob(
      gpuUsage({
        energy_joules: null,
        energy_source: null,
        energy_note: 'No energy counter on this GPU.'
      })
    );
    expect(energy(row).textContent).toBe('');
    expect(energy(row).title).toBe(
      'Not measured: No energy counter on this GPU.'
    );
  });
});

describe('SweepTableRow', () => {
  function renderRow(expanded: boolean) {
    const { commands, calls } = recordingCommands([JobCommandIDs.sweepResults]);
    const model = expansion();
    const actions = { commands, model } as unknown as JobActions;
    const record = sweep({ name: 'lr-grid', size: 1 });
    const facts = sweepFacts({ ...record, sweep: record }, [], NOW);
    render(
      table(
        <SweepTableRow
          id="g1"
          facts={facts}
          size={record.size}
          notebook={record.notebook_path}
          expanded={expanded}
          actions={actions}
          now={NOW}
        />
      )
    );
    return { row: screen.getByTestId('gpu-env-jobs-row'), calls, model };
  }

  it('shows its name, its runs, its facts and its actions', () => {
    const { row } = renderRow(false);
    expect(row.dataset.kind).toBe('sweep');
    expect(row.dataset.id).toBe('g1');
    expect(row.dataset.name).toBe('lr-grid');
    expect(row.dataset.state).toBe('running');
    expect(row.dataset.expanded).toBe('false');
    const name = row.querySelector('[data-column="name"]') as HTMLElement;
    expect(name.className).toBe('jp-GpuEnv-jobsName');
    expect(name.title).toBe('Sweep of work/grid.ipynb');
    expect(name.textContent).toBe('lr-grid (1 run)');
    expect(columns(row)).toEqual(COLUMNS);
    expect(
      row.querySelector('.jp-GpuEnv-jobsActions [data-action="results"]')
    ).not.toBeNull();
  });

  it('shows and hides its runs with its caret', () => {
    const { row, model } = renderRow(false);
    const caret = within(row).getByRole('button', {
      name: 'Show the runs of lr-grid'
    });
    expect(caret.title).toBe('Show the runs');
    expect(caret.getAttribute('aria-expanded')).toBe('false');
    fireEvent.click(caret);
    expect(model.setExpanded).toHaveBeenCalledWith('g1', true, 'view');
  });

  it('says how to hide them once expanded', () => {
    const { row } = renderRow(true);
    const caret = within(row).getByRole('button', {
      name: 'Hide the runs of lr-grid'
    });
    expect(caret.title).toBe('Hide the runs');
    expect(row.dataset.expanded).toBe('true');
  });
});

describe('PipelineRows', () => {
  function renderRows(expanded: boolean) {
    const { commands, calls } = recordingCommands([
      PipelineCommandIDs.open,
      PipelineCommandIDs.cancel,
      JobCommandIDs.showLog
    ]);
    const onToggle = jest.fn();
    const record = pipeline();
    render(
      table(
        <PipelineRows
          pipeline={record}
          facts={pipelineFacts(record, NOW)}
          nodes={[]}
          expanded={expanded}
          onToggle={onToggle}
          commands={commands}
          now={NOW}
        />
      )
    );
    return { row: screen.getByTestId('gpu-env-jobs-row'), calls, onToggle };
  }

  it('shows its name, its nodes ended, its facts and its actions', () => {
    const { row, calls } = renderRows(false);
    expect(row.dataset.kind).toBe('pipeline');
    expect(row.dataset.id).toBe('p1');
    expect(row.dataset.name).toBe('etl');
    expect(row.dataset.state).toBe('running');
    expect(row.dataset.expanded).toBe('false');
    const name = row.querySelector('[data-column="name"]') as HTMLElement;
    expect(name.className).toBe('jp-GpuEnv-jobsName');
    expect(name.title).toMatch(
      /^Pipeline of 3 nodes\nFrom work\/etl.pipeline.yaml\n.+\nSubmitted /
    );
    expect(name.textContent).toBe('etl (1 of 3 nodes)');
    expect(
      within(name).getByTestId('gpu-env-jobs-pipeline-ended').textContent
    ).toBe('(1 of 3 nodes)');
    expect(columns(row)).toEqual(COLUMNS);
    fireEvent.click(row.querySelector('[data-action="graph"]')!);
    expect(calls).toEqual([[PipelineCommandIDs.open, { id: 'p1' }]]);
  });

  it('shows and hides its nodes with its caret', () => {
    const { row, onToggle } = renderRows(false);
    const caret = within(row).getByRole('button', {
      name: 'Show the nodes of etl'
    });
    expect(caret.title).toBe('Show the nodes');
    fireEvent.click(caret);
    expect(onToggle).toHaveBeenCalled();
  });

  it('says how to hide them once expanded', () => {
    const { row } = renderRows(true);
    const caret = within(row).getByRole('button', {
      name: 'Hide the nodes of etl'
    });
    expect(caret.title).toBe('Hide the nodes');
    expect(caret.getAttribute('aria-expanded')).toBe('true');
  });
});
