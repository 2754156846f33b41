/**
 * A sweep in the Jobs section: one row for all its runs, with the share of
 * runs ended, the runs per state, and its menu (results, retry, cancel).
 * Expanded, it lists the runs as ordinary job rows.
 */
import {
  ToolbarButtonComponent,
  caretDownIcon,
  tableRowsIcon
} from '@jupyterlab/ui-components';
import React, { useEffect, useRef } from 'react';

import type { GroupState, IJob, IJobGroup, JobState } from '../../api/types';
import { MenuButton } from '../../components/menu-button';
import { ProgressBar } from '../../components/progress';
import { ListRow } from '../../components/row';
import { JobActions } from '../actions';
import { JobCommandIDs, sweepMenu } from '../command-ids';
import { formatDuration, formatTime, isActiveState } from '../format';
import type { JobEntry } from '../model';
import { MAX_RUNS_LISTED } from '../model';
import { JobRow, LEVELS, TONES } from '../row';
import { describeRuns } from './values';

/** What a sweep's row shows, from its record or, until then, its runs. */
export interface IGroupSummary {
  id: string;
  name: string;
  state: GroupState;
  size: number;
  counts: Partial<Record<JobState, number>>;
  group: IJobGroup | null;
}

export function summarize(entry: JobEntry & { kind: 'group' }): IGroupSummary {
  const { group, runs, id } = entry;
  if (group) {
    return {
      id,
      name: group.name,
      state: group.state,
      size: group.size,
      counts: group.counts,
      group
    };
  }
  const counts: Partial<Record<JobState, number>> = {};
  for (const run of runs) {
    counts[run.state] = (counts[run.state] ?? 0) + 1;
  }
  const active = runs.some(run => isActiveState(run.state));
  return {
    id,
    name: runs[0]?.name.replace(/ \[[^\]]*\]$/, '') ?? 'sweep',
    state: active ? 'running' : (runs[0]?.state ?? 'queued'),
    size: runs.length,
    counts,
    group: null
  };
}

/** Runs that ended (succeeded, failed or cancelled). */
export function endedRuns(counts: Partial<Record<JobState, number>>): number {
  return (
    (counts.succeeded ?? 0) + (counts.failed ?? 0) + (counts.cancelled ?? 0)
  );
}

/** The counts in the row's order, with their short and long words. */
const COUNTS: [JobState, (n: number) => string][] = [
  ['succeeded', n => `${n} ✓`],
  ['failed', n => `${n} ✗`],
  ['cancelled', n => `${n} cancelled`],
  ['running', n => `${n} running`],
  ['queued', n => `${n} queued`]
];

function Counts(props: {
  counts: Partial<Record<JobState, number>>;
}): JSX.Element {
  const shown = COUNTS.filter(([state]) => (props.counts[state] ?? 0) > 0);
  const words = shown
    .map(([state]) => `${props.counts[state]} ${state}`)
    .join(', ');
  return (
    <span
      className="jp-GpuEnv-groupCounts"
      title={words}
      data-testid="gpu-env-group-counts"
    >
      {shown.map(([state, text], i) => (
        <React.Fragment key={state}>
          {i > 0 && ' · '}
          <span data-state={state}>{text(props.counts[state] ?? 0)}</span>
        </React.Fragment>
      ))}
    </span>
  );
}

function Runs(props: {
  summary: IGroupSummary;
  actions: JobActions;
  now: number;
}): JSX.Element {
  const { summary, actions, now } = props;
  const { model } = actions;
  const runs = model.runsOf(summary.id);
  if (runs === null) {
    return <div className="jp-GpuEnv-note">Looking for the runs…</div>;
  }
  return (
    <>
      <ul
        className="jp-GpuEnv-list jp-GpuEnv-groupRuns"
        id={`jp-GpuEnv-group-${summary.id}-runs`}
        data-testid="gpu-env-group-runs"
      >
        {runs.map((run: IJob) => (
          <JobRow
            key={run.id}
            job={run}
            actions={actions}
            now={now}
            busy={model.isBusy(run.id)}
            highlighted={false}
          />
        ))}
      </ul>
      {summary.size > runs.length && (
        <div className="jp-GpuEnv-note">
          The first {Math.min(runs.length, MAX_RUNS_LISTED)} of {summary.size}{' '}
          runs; every run is in the results.
        </div>
      )}
    </>
  );
}

export function GroupRow(props: {
  entry: JobEntry & { kind: 'group' };
  actions: JobActions;
  now: number;
  highlighted: boolean;
}): JSX.Element {
  const { entry, actions, now, highlighted } = props;
  const { model, commands } = actions;
  const ref = useRef<HTMLLIElement>(null);
  useEffect(() => {
    if (highlighted) {
      ref.current?.scrollIntoView({ block: 'nearest' });
    }
  }, [highlighted]);
  const summary = summarize(entry);
  const { id, name, state, size, counts, group } = summary;
  const expanded = model.isExpanded(id);
  const ended = endedRuns(counts);
  const active = isActiveState(state);
  const facts = [
    group?.backend ?? entry.runs[0]?.backend,
    group ? describeRuns(group.size, group.max_concurrent) : null,
    group?.varied.length ? `varies ${group.varied.join(', ')}` : null
  ].filter(Boolean);
  return (
    <ListRow
      ref={ref}
      kind="job-group"
      className={highlighted ? 'jp-GpuEnv-job-highlighted' : undefined}
      data={{ id, state, name, size, ended, expanded }}
    >
      <div className="jp-GpuEnv-rowHeader">
        <button
          type="button"
          className="jp-GpuEnv-envToggle jp-GpuEnv-groupToggle"
          aria-expanded={expanded}
          aria-controls={`jp-GpuEnv-group-${id}-runs`}
          title={expanded ? 'Hide the runs' : 'Show the runs'}
          onClick={() => model.setExpanded(id, !expanded)}
        >
          <caretDownIcon.react tag="span" className="jp-GpuEnv-envCaret" />
        </button>
        <span
          className="jp-GpuEnv-badge"
          data-tone={TONES[state]}
          data-testid="gpu-env-job-state"
        >
          {state}
        </span>
        <span
          className="jp-GpuEnv-rowName jp-GpuEnv-jobName"
          title={
            group
              ? `Sweep of ${group.notebook_path}\nSubmitted ${formatTime(group.created_at)}`
              : name
          }
        >
          {name}
        </span>
        <div className="jp-GpuEnv-rowActions" role="toolbar">
          <ToolbarButtonComponent
            icon={tableRowsIcon}
            tooltip="Open the results: the runs side by side"
            dataset={{ action: 'results' }}
            onClick={() =>
              void commands.execute(JobCommandIDs.sweepResults, { group: id })
            }
          />
          <MenuButton
            commands={commands}
            label={`Actions on the sweep '${name}'`}
            entries={sweepMenu(id)}
          />
        </div>
      </div>
      <div className="jp-GpuEnv-jobProgress">
        <ProgressBar
          percent={size ? (ended / size) * 100 : 0}
          level={active ? 'ok' : (LEVELS[state] ?? 'ok')}
          label={`Runs of ${name} ended`}
          valueNow={ended}
          valueMax={size || 1}
          testId="gpu-env-group-progress"
        />
        <span className="jp-GpuEnv-note" data-testid="gpu-env-group-ended">
          {ended} of {size} {size === 1 ? 'run' : 'runs'}
        </span>
      </div>
      <Counts counts={counts} />
      {group && group.gpu_idle_runs.length > 0 && (
        <span
          className="jp-GpuEnv-badge jp-GpuEnv-gpuIdleBadge"
          data-tone="warn"
          data-testid="gpu-env-group-gpu-idle"
          title={
            'Runs whose GPU has been idle for at least ' +
            `${formatDuration(model.gpuIdleSeconds)}: ${group.gpu_idle_runs.join(', ')}`
          }
        >
          GPU idle in {group.gpu_idle_runs.length}{' '}
          {group.gpu_idle_runs.length === 1 ? 'run' : 'runs'}
        </span>
      )}
      <div className="jp-GpuEnv-note">{facts.join(' · ')}</div>
      {expanded && <Runs summary={summary} actions={actions} now={now} />}
    </ListRow>
  );
}
