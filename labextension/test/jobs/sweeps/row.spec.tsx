import { fireEvent, render, screen, within } from '@testing-library/react';
import React from 'react';

import type { IJob, ISweep } from '../../../src/api/types';
import { JobActions } from '../../../src/jobs/actions';
import { JobCommandIDs } from '../../../src/jobs/command-ids';
import { SweepRow } from '../../../src/jobs/sweeps/row';
import { expansion, recordingCommands } from '../../fakes';
import { NOW, job, sweep } from '../../records';

/** The jobs model as the row asks it: which sweeps are expanded, their runs. */
function fakeActions(runs: IJob[] | null) {
  const { commands, calls } = recordingCommands([JobCommandIDs.sweepResults]);
  const { isExpanded, setExpanded } = expansion();
  const model = {
    gpuIdleSeconds: 1800,
    client: {},
    isExpanded,
    setExpanded,
    runsOf: () => runs,
    isBusy: () => false
  };
  const actions = { commands, model } as unknown as JobActions;
  return { actions, calls, setExpanded };
}

function renderRow(record: ISweep, runs: IJob[] | null = []) {
  const fake = fakeActions(runs);
  const entry = { kind: 'sweep' as const, id: record.id, sweep: record, runs };
  const element = () => (
    <ul>
      <SweepRow
        entry={{ ...entry, runs: runs ?? [] }}
        actions={fake.actions}
        now={NOW}
        highlighted={false}
      />
    </ul>
  );
  const view = render(element());
  return {
    ...fake,
    row: () => screen.getByTestId('gpu-env-sweep'),
    // The section re-renders on the model's signal; here by hand.
    rerender: () => view.rerender(element())
  };
}

describe('SweepRow', () => {
  it('shows the name, state, runs ended and the counts per state', () => {
    const { row } = renderRow(sweep({ name: 'lr-grid' }));
    const r = row();
    expect(r.dataset.id).toBe('g1');
    expect(r.dataset.size).toBe('4');
    expect(r.dataset.ended).toBe('2');
    expect(r.dataset.expanded).toBe('false');
    expect(within(r).getByText('lr-grid').className).toBe(
      'jp-GpuEnv-rowName jp-GpuEnv-jobName'
    );
    expect(within(r).getByTestId('gpu-env-job-state').textContent).toBe(
      'running'
    );
    expect(within(r).getByTestId('gpu-env-sweep-ended').textContent).toBe(
      '2 of 4 runs'
    );
    const bar = within(r).getByRole('progressbar', {
      name: 'Runs of lr-grid ended'
    });
    expect(bar.getAttribute('aria-valuenow')).toBe('2');
    expect(bar.getAttribute('aria-valuemax')).toBe('4');
    expect(bar.dataset.level).toBe('ok');
    expect(within(r).getByTestId('gpu-env-sweep-counts').textContent).toBe(
      '1 ✓ · 1 ✗ · 2 running'
    );
  });

  it('says which runs idle their GPU', () => {
    const { row } = renderRow(sweep({ gpu_idle_runs: ['j2'] }));
    expect(
      within(row()).getByTestId('gpu-env-sweep-gpu-idle').textContent
    ).toBe('GPU idle in 1 run');
  });

  it('asks the model to expand it, then lists its runs as job rows', () => {
    const runs = [
      job({ id: 'j2', name: 'lr-grid [alpha=1]' }),
      job({ id: 'j3', name: 'lr-grid [alpha=2]', state: 'queued' })
    ];
    const { row, setExpanded, rerender } = renderRow(sweep(), runs);
    const toggle = row().querySelector(
      '.jp-GpuEnv-sweepRunsToggle'
    ) as HTMLButtonElement;
    expect(toggle.getAttribute('aria-expanded')).toBe('false');
    expect(toggle.getAttribute('aria-controls')).toBe(
      'jp-GpuEnv-sweep-g1-runs'
    );
    expect(screen.queryByTestId('gpu-env-sweep-runs')).toBeNull();

    fireEvent.click(toggle);
    expect(setExpanded).toHaveBeenCalledWith('g1', true);
    rerender();
    expect(toggle.getAttribute('aria-expanded')).toBe('true');
    expect(toggle.title).toBe('Hide the runs');
    const list = screen.getByTestId('gpu-env-sweep-runs');
    expect(list.id).toBe('jp-GpuEnv-sweep-g1-runs');
    const names = within(list)
      .getAllByTestId('gpu-env-job')
      .map(r => r.dataset.name);
    expect(names).toEqual(['lr-grid [alpha=1]', 'lr-grid [alpha=2]']);

    fireEvent.click(toggle);
    expect(setExpanded).toHaveBeenLastCalledWith('g1', false);
  });

  it('says it is looking for the runs until the model has them', () => {
    const { row, rerender } = renderRow(sweep(), null);
    fireEvent.click(row().querySelector('.jp-GpuEnv-sweepRunsToggle')!);
    rerender();
    expect(within(row()).getByText('Looking for the runs…')).toBeTruthy();
  });

  it('opens its results with its id', () => {
    const { row, calls } = renderRow(sweep({ id: 'g5' }));
    fireEvent.click(row().querySelector('[data-action="results"]')!);
    expect(calls).toEqual([[JobCommandIDs.sweepResults, { sweep: 'g5' }]]);
  });
});
