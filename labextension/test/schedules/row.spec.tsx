import { fireEvent, render, screen, within } from '@testing-library/react';
import React from 'react';

import type { IJob, ISchedule } from '../../src/api/types';
import { JobActions } from '../../src/jobs/actions';
import { ScheduleActions } from '../../src/schedules/actions';
import { ScheduleCommandIDs } from '../../src/schedules/command-ids';
import { ScheduleRow } from '../../src/schedules/row';
import { expansion, recordingCommands } from '../fakes';
import { NOW, job, schedule } from '../records';

function renderRow(
  record: ISchedule,
  options: { busy?: boolean; runs?: IJob[] | null } = {}
) {
  const { commands, calls } = recordingCommands(
    Object.values(ScheduleCommandIDs)
  );
  const { isExpanded, setExpanded } = expansion();
  const actions = {
    model: {
      isBusy: () => options.busy ?? false,
      isExpanded,
      setExpanded,
      runsOf: () => (options.runs === undefined ? [] : options.runs)
    }
  } as unknown as ScheduleActions;
  const jobActions = {
    commands,
    model: { isBusy: () => false, gpuIdleSeconds: 1800, client: {} }
  } as unknown as JobActions;
  const element = () => (
    <ul>
      <ScheduleRow
        schedule={record}
        actions={actions}
        jobActions={jobActions}
        now={NOW}
        highlighted={false}
      />
    </ul>
  );
  const view = render(element());
  const row = () => screen.getByTestId('gpu-env-schedule');
  const button = (action: string) =>
    row().querySelector(`[data-action="${action}"]`) as HTMLElement;
  return {
    row,
    button,
    calls,
    setExpanded,
    rerender: () => view.rerender(element())
  };
}

describe('ScheduleRow', () => {
  it('shows its name, what it does, its state and its next run', () => {
    const { row } = renderRow(schedule());
    const r = row();
    expect(r.dataset.id).toBe('s1');
    expect(r.dataset.active).toBe('true');
    expect(r.dataset.lost).toBe('false');
    expect(within(r).getByText('nightly').className).toBe(
      'jp-GpuEnv-rowName jp-GpuEnv-jobName'
    );
    expect(
      within(r).getByTestId('gpu-env-schedule-description').textContent
    ).toBe('every day at 06:00');
    expect(within(r).getByTestId('gpu-env-schedule-state').textContent).toBe(
      'active'
    );
    expect(within(r).getByTestId('gpu-env-schedule-next').textContent).toMatch(
      /^Next /
    );
    expect(within(r).queryByTestId('gpu-env-schedule-keeper')).toBeNull();
  });

  it('shows a paused schedule as paused, with Resume', () => {
    const { row, button } = renderRow(schedule({ active: false }));
    const state = within(row()).getByTestId('gpu-env-schedule-state');
    expect(state.textContent).toBe('paused');
    expect(state.dataset.tone).toBe('warn');
    expect(button('pause')).toBeNull();
    expect(button('resume')).not.toBeNull();
  });

  it('shows its last runs as marks', () => {
    const { row } = renderRow(
      schedule({
        last_runs: [
          {
            due_at: NOW - 86400,
            outcome: 'started',
            job_id: 'j1',
            group_id: null,
            pipeline_id: null,
            state: 'succeeded',
            message: ''
          },
          {
            due_at: NOW - 3600,
            outcome: 'skipped',
            job_id: null,
            group_id: null,
            pipeline_id: null,
            state: null,
            message: 'the last run was still running'
          }
        ]
      })
    );
    const marks = within(
      within(row()).getByTestId('gpu-env-schedule-marks')
    ).getAllByRole('listitem');
    expect(marks.map(m => m.dataset.outcome)).toEqual(['started', 'skipped']);
  });

  it('pauses and runs now with its id', () => {
    const { button, calls } = renderRow(schedule({ id: 's3' }));
    fireEvent.click(button('pause'));
    fireEvent.click(button('run-now'));
    expect(calls).toEqual([
      [ScheduleCommandIDs.pause, { id: 's3' }],
      [ScheduleCommandIDs.runNow, { id: 's3' }]
    ]);
  });

  it('disables its buttons while busy', () => {
    const { button } = renderRow(schedule(), { busy: true });
    for (const action of ['pause', 'run-now']) {
      expect(button(action).getAttribute('aria-disabled')).toBe('true');
      expect(button(action).title).toBe('Working…');
    }
  });

  it('offers Re-arm where the batch system lost it', () => {
    const lost = schedule({
      keeper: { kind: 'backend', handle: '12', present: false, message: '' }
    });
    const { row, calls } = renderRow(lost);
    expect(row().dataset.lost).toBe('true');
    const keeper = within(row()).getByTestId('gpu-env-schedule-keeper');
    expect(keeper.dataset.level).toBe('lost');
    fireEvent.click(within(keeper).getByRole('button', { name: 'Re-arm' }));
    expect(calls).toEqual([[ScheduleCommandIDs.rearm, { id: 's1' }]]);
  });

  it('ignores Re-arm while busy', () => {
    const lost = schedule({
      keeper: { kind: 'backend', handle: '12', present: false, message: '' }
    });
    const { calls } = renderRow(lost, { busy: true });
    const rearm = screen.getByRole('button', { name: 'Re-arm' });
    expect((rearm as HTMLButtonElement).disabled).toBe(true);
    fireEvent.click(rearm);
    expect(calls).toEqual([]);
  });

  it('expands from its name or its caret to list its runs', () => {
    const runs = [job({ id: 'j8', name: 'nightly 1 Dec', schedule_id: 's1' })];
    const { row, setExpanded, rerender } = renderRow(schedule(), { runs });
    const toggle = row().querySelector(
      '.jp-GpuEnv-scheduleToggle'
    ) as HTMLButtonElement;
    expect(toggle.getAttribute('aria-expanded')).toBe('false');
    expect(screen.queryByTestId('gpu-env-schedule-runs')).toBeNull();

    fireEvent.click(within(row()).getByText('nightly'));
    expect(setExpanded).toHaveBeenCalledWith('s1', true);
    rerender();
    expect(toggle.getAttribute('aria-expanded')).toBe('true');
    expect(row().dataset.expanded).toBe('true');
    const list = screen.getByTestId('gpu-env-schedule-runs');
    expect(toggle.getAttribute('aria-controls')).toBe(list.id);
    expect(within(list).getByTestId('gpu-env-job').dataset.id).toBe('j8');

    fireEvent.click(toggle);
    expect(setExpanded).toHaveBeenLastCalledWith('s1', false);
  });

  it('says when it has no run yet', () => {
    const { row, rerender } = renderRow(schedule(), { runs: [] });
    fireEvent.click(row().querySelector('.jp-GpuEnv-scheduleToggle')!);
    rerender();
    expect(
      within(row()).getByTestId('gpu-env-schedule-no-runs').textContent
    ).toBe('No run yet.');
  });
});
