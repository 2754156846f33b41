/**
 * One job in the Jobs section: its name on a line of its own (in full,
 * wrapped if need be), then its state, elapsed time and actions, progress,
 * why it waits or failed; and the list of such rows that an expanded sweep
 * or schedule shows.
 */
import {
  ToolbarButtonComponent,
  deleteIcon,
  notebookIcon,
  runIcon,
  stopIcon,
  textEditorIcon
} from '@jupyterlab/ui-components';
import React from 'react';

import { JobActions } from './actions';
import { JobCommandIDs } from './command-ids';
import {
  describeGpuDetail,
  describeProgress,
  describeQueue,
  describeResources,
  describeRuntime,
  elapsedSeconds,
  formatClock,
  formatTime,
  INTERACTIVE_LABEL,
  isActive,
  isInteractive,
  progressFraction
} from './format';
import type { IJob, JobState, PipelineState } from '../api/types';
import { StateBadge } from '../components/figures/badge';
import { BarLevel, ProgressBar } from '../components/figures/progress';
import { ListRow } from '../components/row';
import { describeParameters } from './sweeps/values';
import { GpuIdleBadge, GpuUse } from './run/gpu-use';
import { Attempts, PriorityBadge } from './run/attempts';

/** `alpha=0.1 · lr=0.01`, cut to one line; every value in the tooltip. */
export function Parameters(props: {
  parameters: Record<string, unknown>;
}): JSX.Element | null {
  const { parameters } = props;
  if (Object.keys(parameters).length === 0) {
    return null;
  }
  const full = Object.entries(parameters)
    .map(([name, value]) => `${name} = ${JSON.stringify(value)}`)
    .join('\n');
  return (
    <div
      className="jp-GpuEnv-jobParams jp-GpuEnv-note"
      title={full}
      data-testid="gpu-env-job-params"
    >
      {describeParameters(parameters)}
    </div>
  );
}

/**
 * Whether the output notebook can be opened in JupyterLab (an interactive
 * session writes none).
 */
export function outputOpenable(job: IJob): boolean {
  return (
    !isInteractive(job) &&
    job.started_at !== null &&
    !job.output_path.startsWith('/')
  );
}

/** "Interactive session" beside the state of a batch kernel's job. */
export function KindBadge(props: { job: IJob }): JSX.Element | null {
  if (!isInteractive(props.job)) {
    return null;
  }
  return (
    <span
      className="jp-GpuEnv-badge"
      data-tone="brand"
      title="A kernel on the batch system, started by opening a notebook with it: it writes no output notebook"
      data-testid="gpu-env-job-kind"
    >
      {INTERACTIVE_LABEL}
    </span>
  );
}

export const LEVELS: Partial<Record<IJob['state'], BarLevel>> = {
  succeeded: 'success',
  failed: 'critical',
  cancelled: 'warn'
};

/**
 * How far a sweep's runs or a pipeline's nodes have come: a bar of those
 * ended (coloured as the state once it ends) and "2 of 4 runs" beside it.
 */
export function EndedProgress(props: {
  ended: number;
  total: number;
  state: JobState | PipelineState;
  active: boolean;
  /** The sweep's or pipeline's name, for screen readers. */
  name: string;
  /** What is counted, singular: `run`, `node`. */
  unit: string;
  /** The test ids' stem: `gpu-env-sweep` gives `gpu-env-sweep-progress`. */
  testId: string;
}): JSX.Element {
  const { ended, total, state, active, name, unit, testId } = props;
  const units = total === 1 ? unit : `${unit}s`;
  return (
    <div className="jp-GpuEnv-jobProgress">
      <ProgressBar
        percent={total ? (ended / total) * 100 : 0}
        level={active ? 'ok' : (LEVELS[state] ?? 'ok')}
        label={`${unit[0].toUpperCase()}${unit.slice(1)}s of ${name} ended`}
        valueNow={ended}
        valueMax={total || 1}
        testId={`${testId}-progress`}
      />
      <span className="jp-GpuEnv-note" data-testid={`${testId}-ended`}>
        {ended} of {total} {units}
      </span>
    </div>
  );
}

function Progress(props: { job: IJob }): JSX.Element | null {
  const { job } = props;
  if (isInteractive(job)) {
    return null; // a kernel runs cells as they are sent: no count to show
  }
  const text = describeProgress(job);
  const running = job.state === 'running';
  if (!running && !(text && job.state !== 'queued')) {
    return null;
  }
  const known = text !== null || job.state === 'succeeded';
  return (
    <div className="jp-GpuEnv-jobProgress">
      <ProgressBar
        percent={known ? progressFraction(job) * 100 : null}
        level={LEVELS[job.state] ?? 'ok'}
        label={`Progress of ${job.name}`}
        valueNow={known ? job.progress.cells_done : undefined}
        valueMax={job.progress.cells_total || 1}
      />
      <span className="jp-GpuEnv-note">{text ?? 'starting…'}</span>
    </div>
  );
}

function Detail(props: { job: IJob; now: number }): JSX.Element | null {
  const { job, now } = props;
  if (job.state === 'queued') {
    const why = job.pending_reason || job.message;
    const queue = describeQueue(job, now);
    if (!why && !queue) {
      return null;
    }
    return (
      <div className="jp-GpuEnv-jobNote jp-GpuEnv-note">
        {queue && (
          <span
            className="jp-GpuEnv-jobQueue"
            data-testid="gpu-env-job-queue"
            title={
              job.estimated_start !== null
                ? `Estimated start ${formatTime(job.estimated_start)}`
                : undefined
            }
          >
            {queue}
          </span>
        )}
        {queue && why && ' · '}
        {why && <span data-testid="gpu-env-job-pending">{why}</span>}
      </div>
    );
  }
  if (job.state === 'failed' || job.state === 'cancelled') {
    return job.message ? (
      <div
        className="jp-GpuEnv-jobNote jp-GpuEnv-note"
        data-state={job.state}
        data-testid="gpu-env-job-message"
        title={job.reason ?? undefined}
      >
        {job.message}
      </div>
    ) : null;
  }
  return null;
}

/**
 * A job's actions: its log, its output, "Run again…" (where that command is
 * registered), cancel while it is active, delete. The sidebar shows either
 * "Run again…" or cancel; `rerunWhileActive` shows both (the Jobs view). An
 * interactive session has neither output nor "Run again…".
 */
export function JobActionButtons(props: {
  job: IJob;
  actions: JobActions;
  busy: boolean;
  rerunWhileActive?: boolean;
}): JSX.Element {
  const { job, actions, busy } = props;
  const { commands } = actions;
  const active = isActive(job);
  const interactive = isInteractive(job);
  const rerun =
    !interactive &&
    (!active || props.rerunWhileActive) &&
    commands.hasCommand(JobCommandIDs.runAgain);
  return (
    <div className="jp-GpuEnv-rowActions" role="toolbar">
      <ToolbarButtonComponent
        icon={textEditorIcon}
        tooltip="Show the log (follows it while the job runs)"
        dataset={{ action: 'log' }}
        onClick={() => actions.showLog(job)}
      />
      {!interactive && (
        <ToolbarButtonComponent
          icon={notebookIcon}
          tooltip={`Open the output notebook (${job.output_path})`}
          disabledTooltip={
            job.output_path.startsWith('/')
              ? `The output is outside the server's root: ${job.output_path}`
              : 'No output yet: the job has not started'
          }
          enabled={outputOpenable(job)}
          dataset={{ action: 'output' }}
          onClick={() => actions.openOutput(job)}
        />
      )}
      {rerun && (
        <ToolbarButtonComponent
          icon={runIcon}
          tooltip="Run again… (its values filled in, to change before sending)"
          aria-label={`Run ${job.name} again`}
          dataset={{ action: 'run-again' }}
          onClick={() =>
            void commands.execute(JobCommandIDs.runAgain, { id: job.id })
          }
        />
      )}
      {active && (
        <ToolbarButtonComponent
          icon={stopIcon}
          tooltip="Cancel the job"
          disabledTooltip="Working…"
          enabled={!busy}
          dataset={{ action: 'cancel' }}
          onClick={() => void actions.cancel(job)}
        />
      )}
      <ToolbarButtonComponent
        icon={deleteIcon}
        tooltip="Delete the job, its output and its log"
        disabledTooltip="Working…"
        enabled={!busy}
        dataset={{ action: 'delete' }}
        onClick={() => void actions.remove(job)}
      />
    </div>
  );
}

/** A job's row: its name, state, clock, actions, progress and notes. */
export function JobRow(props: {
  job: IJob;
  actions: JobActions;
  /** Unix seconds, for the elapsed time. */
  now: number;
  busy: boolean;
  highlighted: boolean;
}): JSX.Element {
  const { job, actions, now, busy, highlighted } = props;
  // A job that has not run (queued, or cancelled before it started) shows
  // no clock: its place in the queue or its message says more.
  const ran = job.started_at !== null;
  const elapsed = elapsedSeconds(job, now);
  const facts = [
    job.backend + (job.queue ? ` · ${job.queue}` : ''),
    describeRuntime(job),
    describeResources(job.resources)
  ].filter(Boolean);
  return (
    <ListRow
      kind="job"
      highlighted={highlighted}
      data={{ id: job.id, state: job.state, name: job.name }}
    >
      <div className="jp-GpuEnv-rowHeader">
        <span
          className="jp-GpuEnv-rowName jp-GpuEnv-jobName"
          title={`${job.notebook_path}\nSubmitted ${formatTime(job.created_at)}`}
        >
          {job.name}
        </span>
      </div>
      <div className="jp-GpuEnv-jobStatus">
        <StateBadge state={job.state} />
        <KindBadge job={job} />
        <PriorityBadge job={job} />
        {ran && (
          <span
            className="jp-GpuEnv-jobElapsed jp-GpuEnv-note"
            title={`Ran for ${formatClock(elapsed)}`}
            data-testid="gpu-env-job-elapsed"
          >
            {formatClock(elapsed)}
          </span>
        )}
        <GpuIdleBadge job={job} threshold={actions.model.gpuIdleSeconds} />
        <JobActionButtons job={job} actions={actions} busy={busy} />
      </div>
      <Parameters parameters={job.parameters} />
      <Progress job={job} />
      <Detail job={job} now={now} />
      <Attempts job={job} />
      <GpuUse job={job} client={actions.model.client} />
      <div
        className="jp-GpuEnv-note"
        data-testid="gpu-env-job-facts"
        title={
          job.gpu && !job.gpu.available ? describeGpuDetail(job.gpu) : undefined
        }
      >
        {facts.join(' · ')}
      </div>
    </ListRow>
  );
}

/**
 * The runs an expanded row lists (a sweep's, a schedule's) as job rows with
 * their own actions; `id` is what the row's caret controls.
 */
export function RunList(props: {
  runs: readonly IJob[];
  actions: JobActions;
  now: number;
  id: string;
  testId: string;
}): JSX.Element {
  const { runs, actions, now } = props;
  return (
    <ul
      className="jp-GpuEnv-list jp-GpuEnv-sweepRunList"
      id={props.id}
      data-testid={props.testId}
    >
      {runs.map(run => (
        <JobRow
          key={run.id}
          job={run}
          actions={actions}
          now={now}
          busy={actions.model.isBusy(run.id)}
          highlighted={false}
        />
      ))}
    </ul>
  );
}
