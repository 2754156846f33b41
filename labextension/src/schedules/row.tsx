/**
 * The Jobs section's "Schedules" group: each schedule's name on a line of
 * its own, what it does in words, its last runs as small coloured marks
 * (a title each), the next run (how far off, and when in the user's time),
 * how its keeper stands (the local backend's "runs only while this server
 * runs"; a waiting job gone, with Re-arm), pause or resume, run now and a
 * "⋯" menu (edit, update snapshot, re-arm, delete). Clicking the name lists
 * its recent runs, with the job rows' own actions.
 */
import {
  ToolbarButtonComponent,
  pauseIcon,
  runIcon,
  fastForwardIcon
} from '@jupyterlab/ui-components';
import React from 'react';

import type { ISchedule } from '../api/types';
import { StateBadge } from '../components/figures/badge';
import { useSignals } from '../components/hooks';
import { MenuButton } from '../components/menu-button';
import { ExpandableRow } from '../components/row';
import { JobActions } from '../jobs/actions';
import { formatTime } from '../jobs/format';
import { RunList } from '../jobs/row';
import { ScheduleActions } from './actions';
import { ScheduleCommandIDs, scheduleMenu } from './command-ids';
import {
  describeNext,
  describeWhere,
  formatDue,
  keeperNote,
  marksInOrder,
  runMark
} from './format';

function Marks(props: {
  schedule: ISchedule;
  now: number;
}): JSX.Element | null {
  const runs = marksInOrder(props.schedule.last_runs);
  if (runs.length === 0) {
    return null;
  }
  return (
    <span
      className="jp-GpuEnv-scheduleMarks"
      role="list"
      aria-label="The last runs, oldest first"
      data-testid="gpu-env-schedule-marks"
    >
      {runs.map(run => {
        const mark = runMark(run, props.now);
        return (
          <span
            key={`${run.due_at}-${run.job_id ?? run.outcome}`}
            role="listitem"
            className="jp-GpuEnv-scheduleMark"
            data-tone={mark.tone}
            data-outcome={run.outcome}
            data-state={run.state ?? ''}
            title={mark.title}
            aria-label={mark.title}
          />
        );
      })}
    </span>
  );
}

function Runs(props: {
  schedule: ISchedule;
  actions: ScheduleActions;
  jobActions: JobActions;
  now: number;
}): JSX.Element {
  const { schedule, actions, jobActions, now } = props;
  const runs = actions.model.runsOf(schedule.id);
  if (runs === null) {
    return <div className="jp-GpuEnv-note">Looking for its runs…</div>;
  }
  if (runs.length === 0) {
    return (
      <div className="jp-GpuEnv-note" data-testid="gpu-env-schedule-no-runs">
        No run yet.
      </div>
    );
  }
  return (
    <RunList
      runs={runs}
      actions={jobActions}
      now={now}
      id={`jp-GpuEnv-schedule-${schedule.id}-runs`}
      testId="gpu-env-schedule-runs"
    />
  );
}

export function ScheduleRow(props: {
  schedule: ISchedule;
  actions: ScheduleActions;
  jobActions: JobActions;
  now: number;
  highlighted: boolean;
}): JSX.Element {
  const { schedule, actions, jobActions, now, highlighted } = props;
  const { model } = actions;
  const { commands } = jobActions;
  const { id, name, active } = schedule;
  const busy = model.isBusy(id);
  const expanded = model.isExpanded(id);
  const keeper = keeperNote(schedule);
  const next = schedule.next_runs
    .map(run => `${formatDue(run.at, now)} (${run.local})`)
    .join('\n');
  const run = (command: string): void => void commands.execute(command, { id });
  const toggle = (): void => model.setExpanded(id, !expanded);
  return (
    <ExpandableRow
      kind="schedule"
      highlighted={highlighted}
      data={{ id, name, active, lost: keeper?.level === 'lost' }}
      expanded={expanded}
      onToggle={toggle}
      toggle={{
        title: expanded ? 'Hide its runs' : 'Show its recent runs',
        controls: `jp-GpuEnv-schedule-${id}-runs`,
        className: 'jp-GpuEnv-scheduleToggle'
      }}
      name={
        <span
          className="jp-GpuEnv-rowName jp-GpuEnv-jobName"
          title={
            `${schedule.notebook_path} (snapshot of ${formatTime(schedule.snapshot_at)})\n` +
            `${schedule.schedule} in ${schedule.timezone}`
          }
          onClick={toggle}
        >
          {name}
        </span>
      }
      details={
        <Runs
          schedule={schedule}
          actions={actions}
          jobActions={jobActions}
          now={now}
        />
      }
    >
      <div
        className="jp-GpuEnv-note jp-GpuEnv-scheduleWords"
        data-testid="gpu-env-schedule-description"
      >
        {schedule.description}
      </div>
      <div className="jp-GpuEnv-jobStatus">
        <StateBadge
          state={active ? 'active' : 'paused'}
          tone={active ? 'brand' : 'warn'}
          testId="gpu-env-schedule-state"
        />
        <Marks schedule={schedule} now={now} />
        <div className="jp-GpuEnv-rowActions" role="toolbar">
          <ToolbarButtonComponent
            icon={active ? pauseIcon : fastForwardIcon}
            tooltip={
              active
                ? 'Pause: no run starts until it is resumed'
                : 'Resume: runs again from its next time'
            }
            disabledTooltip="Working…"
            enabled={!busy}
            dataset={{ action: active ? 'pause' : 'resume' }}
            onClick={() =>
              run(active ? ScheduleCommandIDs.pause : ScheduleCommandIDs.resume)
            }
          />
          <ToolbarButtonComponent
            icon={runIcon}
            tooltip="Run now (once, outside its times)"
            disabledTooltip="Working…"
            enabled={!busy}
            dataset={{ action: 'run-now' }}
            onClick={() => run(ScheduleCommandIDs.runNow)}
          />
          <MenuButton
            commands={commands}
            label={`Actions on the schedule '${name}'`}
            entries={scheduleMenu(id)}
          />
        </div>
      </div>
      <div
        className="jp-GpuEnv-note"
        data-testid="gpu-env-schedule-next"
        title={next || undefined}
      >
        {describeNext(schedule, now)}
      </div>
      {keeper && (
        <div
          className="jp-GpuEnv-note jp-GpuEnv-scheduleKeeper"
          data-level={keeper.level}
          data-testid="gpu-env-schedule-keeper"
        >
          {keeper.text}
          {keeper.level === 'lost' && (
            <button
              type="button"
              className="jp-Button jp-mod-styled jp-mod-accept jp-GpuEnv-rearm"
              disabled={busy}
              onClick={() => run(ScheduleCommandIDs.rearm)}
            >
              Re-arm
            </button>
          )}
        </div>
      )}
      <div className="jp-GpuEnv-note">{describeWhere(schedule)}</div>
    </ExpandableRow>
  );
}

/** The schedules, above the jobs; nothing while there is none. */
export function SchedulesGroup(props: {
  actions: ScheduleActions;
  jobActions: JobActions;
  now: number;
  highlighted: string | null;
}): JSX.Element | null {
  const { actions, jobActions, now, highlighted } = props;
  const { model } = actions;
  useSignals([model.changed]);
  const schedules = model.schedules;
  if (!schedules?.length) {
    return null;
  }
  return (
    <div className="jp-GpuEnv-schedules" data-testid="gpu-env-schedules">
      <h3 className="jp-GpuEnv-groupTitle">Schedules ({schedules.length})</h3>
      <ul className="jp-GpuEnv-list" data-testid="gpu-env-schedule-list">
        {schedules.map(schedule => (
          <ScheduleRow
            key={schedule.id}
            schedule={schedule}
            actions={actions}
            jobActions={jobActions}
            now={now}
            highlighted={schedule.id === highlighted}
          />
        ))}
      </ul>
      {model.error && (
        <div className="jp-GpuEnv-note" data-level="error">
          Could not list the schedules again: {model.error.message}
        </div>
      )}
    </div>
  );
}
