/**
 * A sweep in the Jobs section: one row for all its runs, with the share of
 * runs ended, the runs per state, and its menu (results, retry, cancel).
 * Expanded, it lists the runs as ordinary job rows.
 */
import {
  ToolbarButtonComponent,
  tableRowsIcon
} from '@jupyterlab/ui-components';
import { CommandRegistry } from '@lumino/commands';
import React from 'react';

import type { ISweep, JobState, SweepState } from '../../api/types';
import { MenuButton } from '../../components/menu-button';
import { JobActions } from '../actions';
import { JobCommandIDs, sweepMenu } from '../command-ids';
import { formatDuration, formatTime, isActiveState } from '../format';
import type { JobEntry } from '../model';
import { MAX_RUNS_LISTED } from '../model';
import { StateBadge } from '../../components/figures/badge';
import { EndedProgress, RunList } from '../row';
import { ExpandableRow } from '../../components/row';
import { describeRuns } from './values';

/** What a sweep's row shows, from its record or, until then, its runs. */
export interface ISweepSummary {
  id: string;
  name: string;
  state: SweepState;
  size: number;
  counts: Partial<Record<JobState, number>>;
  sweep: ISweep | null;
}

export function summarize(entry: JobEntry & { kind: 'sweep' }): ISweepSummary {
  const { sweep, runs, id } = entry;
  if (sweep) {
    return {
      id,
      name: sweep.name,
      state: sweep.state,
      size: sweep.size,
      counts: sweep.counts,
      sweep
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
    sweep: null
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
      className="jp-GpuEnv-sweepCounts"
      title={words}
      data-testid="gpu-env-sweep-counts"
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
  summary: ISweepSummary;
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
      <RunList
        runs={runs}
        actions={actions}
        now={now}
        id={`jp-GpuEnv-sweep-${summary.id}-runs`}
        testId="gpu-env-sweep-runs"
      />
      {summary.size > runs.length && (
        <div className="jp-GpuEnv-note">
          The first {Math.min(runs.length, MAX_RUNS_LISTED)} of {summary.size}{' '}
          runs; every run is in the results.
        </div>
      )}
    </>
  );
}

/** A sweep's actions: its results, and its menu (retry, cancel…). */
export function SweepActionButtons(props: {
  id: string;
  name: string;
  commands: CommandRegistry;
}): JSX.Element {
  const { id, name, commands } = props;
  return (
    <div className="jp-GpuEnv-rowActions" role="toolbar">
      <ToolbarButtonComponent
        icon={tableRowsIcon}
        tooltip="Open the results: the runs side by side"
        dataset={{ action: 'results' }}
        onClick={() =>
          void commands.execute(JobCommandIDs.sweepResults, { sweep: id })
        }
      />
      <MenuButton
        commands={commands}
        label={`Actions on the sweep '${name}'`}
        entries={sweepMenu(id)}
      />
    </div>
  );
}

export function SweepRow(props: {
  entry: JobEntry & { kind: 'sweep' };
  actions: JobActions;
  now: number;
  highlighted: boolean;
}): JSX.Element {
  const { entry, actions, now, highlighted } = props;
  const { model, commands } = actions;
  const summary = summarize(entry);
  const { id, name, state, size, counts, sweep } = summary;
  const expanded = model.isExpanded(id);
  const ended = endedRuns(counts);
  const active = isActiveState(state);
  const facts = [
    sweep?.backend ?? entry.runs[0]?.backend,
    sweep ? describeRuns(sweep.size, sweep.max_concurrent) : null,
    sweep?.varied.length ? `varies ${sweep.varied.join(', ')}` : null
  ].filter(Boolean);
  return (
    <ExpandableRow
      kind="sweep"
      highlighted={highlighted}
      data={{ id, state, name, size, ended }}
      expanded={expanded}
      onToggle={() => model.setExpanded(id, !expanded)}
      toggle={{
        title: expanded ? 'Hide the runs' : 'Show the runs',
        controls: `jp-GpuEnv-sweep-${id}-runs`,
        className: 'jp-GpuEnv-sweepRunsToggle'
      }}
      name={
        <span
          className="jp-GpuEnv-rowName jp-GpuEnv-jobName"
          title={
            sweep
              ? `Sweep of ${sweep.notebook_path}\nSubmitted ${formatTime(sweep.created_at)}`
              : name
          }
        >
          {name}
        </span>
      }
      details={<Runs summary={summary} actions={actions} now={now} />}
    >
      <div className="jp-GpuEnv-jobStatus">
        <StateBadge state={state} />
        <Counts counts={counts} />
        <SweepActionButtons id={id} name={name} commands={commands} />
      </div>
      <EndedProgress
        ended={ended}
        total={size}
        state={state}
        active={active}
        name={name}
        unit="run"
        testId="gpu-env-sweep"
      />
      {sweep && sweep.gpu_idle_runs.length > 0 && (
        <span
          className="jp-GpuEnv-badge jp-GpuEnv-gpuIdleBadge"
          data-tone="warn"
          data-testid="gpu-env-sweep-gpu-idle"
          title={
            'Runs whose GPU has been idle for at least ' +
            `${formatDuration(model.gpuIdleSeconds)}: ${sweep.gpu_idle_runs.join(', ')}`
          }
        >
          GPU idle in {sweep.gpu_idle_runs.length}{' '}
          {sweep.gpu_idle_runs.length === 1 ? 'run' : 'runs'}
        </span>
      )}
      <div className="jp-GpuEnv-note">{facts.join(' · ')}</div>
    </ExpandableRow>
  );
}
