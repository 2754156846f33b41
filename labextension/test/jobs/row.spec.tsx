import { fireEvent, render, screen, within } from '@testing-library/react';
import React from 'react';

import type { IJob } from '../../src/api/types';
import { JobActions } from '../../src/jobs/actions';
import { JobCommandIDs } from '../../src/jobs/command-ids';
import { JobRow } from '../../src/jobs/row';
import { recordingCommands } from '../fakes';
import { GpuEnergy } from '../../src/jobs/run/gpu-use';
import { NOW, gpuUsage, job } from '../records';

/** The job actions the row calls, each recording its job's id. */
function fakeActions(commandIds: string[] = [JobCommandIDs.runAgain]) {
  const { commands, calls } = recordingCommands(commandIds);
  const called: [string, string][] = [];
  const record =
    (what: string) =>
    (j: IJob): Promise<void> => {
      called.push([what, j.id]);
      return Promise.resolve();
    };
  const actions = {
    commands,
    model: { gpuIdleSeconds: 1800, client: {} },
    showLog: record('log'),
    openOutput: record('output'),
    cancel: record('cancel'),
    remove: record('remove')
  } as unknown as JobActions;
  return { actions, called, calls };
}

function renderRow(
  record: IJob,
  options: { busy?: boolean; commandIds?: string[] } = {}
) {
  const fake = fakeActions(options.commandIds);
  render(
    <ul>
      <JobRow
        job={record}
        actions={fake.actions}
        now={NOW}
        busy={options.busy ?? false}
        highlighted={false}
      />
    </ul>
  );
  const row = screen.getByTestId('gpu-env-job');
  const button = (action: string) =>
    row.querySelector(`[data-action="${action}"]`) as HTMLButtonElement;
  return { ...fake, row, button };
}

describe('JobRow', () => {
  it("shows a running job's name, state, clock and facts", () => {
    const { row } = renderRow(job({ name: 'train-resnet' }));
    expect(row.dataset.id).toBe('j1');
    expect(row.dataset.state).toBe('running');
    expect(row.dataset.name).toBe('train-resnet');
    expect(within(row).getByText('train-resnet').className).toBe(
      'jp-GpuEnv-rowName jp-GpuEnv-jobName'
    );
    expect(within(row).getByTestId('gpu-env-job-state').textContent).toBe(
      'running'
    );
    // Started 125 s before now.
    expect(within(row).getByTestId('gpu-env-job-elapsed').textContent).toBe(
      '2:05'
    );
    expect(within(row).getByTestId('gpu-env-job-facts').textContent).toBe(
      'slurm · gpu · kernel python3 · 4 CPUs · 1 GPU'
    );
    expect(within(row).getByRole('progressbar')).toBeTruthy();
  });

  it('shows no clock for a job that has not started, and why it waits', () => {
    const { row } = renderRow(
      job({
        state: 'queued',
        started_at: null,
        pending_reason: 'Resources'
      })
    );
    expect(within(row).queryByTestId('gpu-env-job-elapsed')).toBeNull();
    expect(within(row).getByTestId('gpu-env-job-pending').textContent).toBe(
      'Resources'
    );
  });

  it("shows a failed job's message", () => {
    const { row } = renderRow(
      job({
        state: 'failed',
        finished_at: NOW - 5,
        message: 'Cell 3 raised ValueError'
      })
    );
    const message = within(row).getByTestId('gpu-env-job-message');
    expect(message.textContent).toBe('Cell 3 raised ValueError');
    expect(message.dataset.state).toBe('failed');
  });

  it("calls the actions with the row's job", () => {
    const { button, called } = renderRow(job({ id: 'j7' }));
    fireEvent.click(button('log'));
    fireEvent.click(button('output'));
    fireEvent.click(button('cancel'));
    fireEvent.click(button('delete'));
    expect(called).toEqual([
      ['log', 'j7'],
      ['output', 'j7'],
      ['cancel', 'j7'],
      ['remove', 'j7']
    ]);
  });

  it('offers Run again… for an ended job, with its id', () => {
    const { button, calls } = renderRow(
      job({ id: 'j9', state: 'succeeded', finished_at: NOW - 1 })
    );
    expect(button('cancel')).toBeNull();
    fireEvent.click(button('run-again'));
    expect(calls).toEqual([[JobCommandIDs.runAgain, { id: 'j9' }]]);
  });

  it('offers no Run again… where the command is not registered', () => {
    const { button } = renderRow(job({ state: 'succeeded' }), {
      commandIds: []
    });
    expect(button('run-again')).toBeNull();
  });

  // That a disabled button ignores clicks is the web component's (jp-button)
  // business, which jsdom does not run: the row's part is to disable it.
  it('disables cancel and delete while busy, and says why', () => {
    const { button } = renderRow(job(), { busy: true });
    for (const action of ['cancel', 'delete']) {
      expect(button(action).disabled).toBe(true);
      expect(button(action).getAttribute('aria-disabled')).toBe('true');
      expect(button(action).title).toBe('Working…');
    }
    expect(button('log').disabled).toBe(false);
    expect(button('output').disabled).toBe(false);
  });

  it('enables cancel and delete when not busy', () => {
    const { button } = renderRow(job(), { busy: false });
    expect(button('cancel').disabled).toBe(false);
    expect(button('cancel').getAttribute('aria-disabled')).toBe('false');
    expect(button('delete').disabled).toBe(false);
  });

  it('shows a batch kernel session as an interactive session, without output or Run again…', () => {
    const { row, button } = renderRow(
      job({
        kind: 'kernel',
        name: 'analysis.ipynb',
        state: 'succeeded',
        finished_at: NOW - 1
      })
    );
    expect(within(row).getByTestId('gpu-env-job-kind').textContent).toBe(
      'Interactive session'
    );
    expect(button('output')).toBeNull();
    expect(button('run-again')).toBeNull();
    expect(button('log')).not.toBeNull();
    expect(button('delete')).not.toBeNull();
    // No cell count: a kernel runs cells as they are sent.
    expect(within(row).queryByRole('progressbar')).toBeNull();
  });

  it('lets an interactive session that runs be cancelled', () => {
    const { row, button } = renderRow(job({ kind: 'kernel' }));
    expect(button('cancel')).not.toBeNull();
    expect(within(row).queryByRole('progressbar')).toBeNull();
  });

  it('shows no kind badge for a notebook run', () => {
    const { row } = renderRow(job());
    expect(within(row).queryByTestId('gpu-env-job-kind')).toBeNull();
  });

  it('cannot open the output of a job that has not started', () => {
    const { button } = renderRow(job({ state: 'queued', started_at: null }));
    expect(button('output').disabled).toBe(true);
    expect(button('output').title).toBe(
      'No output yet: the job has not started'
    );
  });
});

describe("a job's GPU energy", () => {
  it("is in the GPU line's tooltip", () => {
    const { row } = renderRow(job({ state: 'succeeded', gpu: gpuUsage() }));
    const line = within(row).getByTestId('gpu-env-job-gpu');
    expect(line.textContent).toBe('GPU 23% avg · 3.1 of 80 GiB peak');
    expect(line.title).toContain('GPU energy 0.42 kWh (measured)');
  });

  it('shows in the details with its note as the tooltip', () => {
    const note = 'A MIG slice: its GPU’s energy times its share.';
    render(
      <GpuEnergy
        gpu={gpuUsage({
          energy_joules: 0.12 * 3.6e6,
          energy_source: 'share of a whole GPU',
          energy_note: note,
          co2e_grams: 48
        })}
      />
    );
    const line = screen.getByTestId('gpu-env-job-energy');
    expect(line.textContent).toBe(
      'GPU energy 0.12 kWh (estimate: share of a whole GPU) · 48 g CO2e'
    );
    expect(line.title).toBe(note);
    expect(line.dataset.measured).toBe('true');
  });

  it('says it was not measured, and nothing for a job without a GPU', () => {
    const { container } = render(
      <GpuEnergy
        gpu={gpuUsage({
          energy_joules: null,
          energy_source: null,
          energy_note: 'No energy counter or power reading on this GPU.'
        })}
      />
    );
    const line = screen.getByTestId('gpu-env-job-energy');
    expect(line.textContent).toBe('GPU energy not measured');
    expect(line.dataset.measured).toBe('false');
    render(<GpuEnergy gpu={null} />, { container });
    expect(screen.queryByTestId('gpu-env-job-energy')).toBeNull();
  });
});
