/**
 * One job in the Jobs section: state, name, elapsed time, progress, why it
 * waits or failed, and its actions.
 */
import {
  ToolbarButtonComponent,
  deleteIcon,
  notebookIcon,
  stopIcon,
  textEditorIcon
} from '@jupyterlab/ui-components';
import React, { useEffect, useRef } from 'react';

import { JobActions } from './actions';
import {
  describeProgress,
  describeResources,
  describeRuntime,
  elapsedSeconds,
  formatClock,
  formatTime,
  isActive,
  progressFraction
} from './format';
import type { IJob } from '../api/types';

/** Whether the output notebook can be opened in JupyterLab. */
export function outputOpenable(job: IJob): boolean {
  return job.started_at !== null && !job.output_path.startsWith('/');
}

function Progress(props: { job: IJob }): JSX.Element | null {
  const { job } = props;
  const text = describeProgress(job);
  const running = job.state === 'running';
  if (!running && !(text && job.state !== 'queued')) {
    return null;
  }
  const fraction = progressFraction(job);
  const known = text !== null || job.state === 'succeeded';
  return (
    <div className="jp-GpuEnv-jobProgress">
      <div
        className="jp-GpuEnv-jobProgressTrack"
        role="progressbar"
        aria-label={`Progress of ${job.name}`}
        aria-valuemin={0}
        aria-valuemax={job.progress.cells_total || 1}
        aria-valuenow={known ? job.progress.cells_done : undefined}
        data-state={job.state}
        data-indeterminate={!known}
      >
        <div
          className="jp-GpuEnv-jobProgressFill"
          style={{ width: known ? `${fraction * 100}%` : undefined }}
        />
      </div>
      <span className="jp-GpuEnv-jobProgressText">{text ?? 'starting…'}</span>
    </div>
  );
}

function Detail(props: { job: IJob }): JSX.Element | null {
  const { job } = props;
  if (job.state === 'queued') {
    const why = job.pending_reason || job.message;
    return why ? (
      <div className="jp-GpuEnv-jobNote" data-testid="gpu-env-job-pending">
        {why}
      </div>
    ) : null;
  }
  if (job.state === 'failed' || job.state === 'cancelled') {
    return job.message ? (
      <div
        className={`jp-GpuEnv-jobNote jp-GpuEnv-jobNote-${job.state}`}
        data-testid="gpu-env-job-message"
        title={job.reason ?? undefined}
      >
        {job.message}
      </div>
    ) : null;
  }
  return null;
}

function Actions(props: {
  job: IJob;
  actions: JobActions;
  busy: boolean;
}): JSX.Element {
  const { job, actions, busy } = props;
  const active = isActive(job);
  return (
    <div className="jp-GpuEnv-jobActions" role="toolbar">
      <ToolbarButtonComponent
        icon={textEditorIcon}
        tooltip="Show the log (follows it while the job runs)"
        dataset={{ action: 'log' }}
        onClick={() => actions.showLog(job)}
      />
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

export function JobRow(props: {
  job: IJob;
  actions: JobActions;
  /** Unix seconds, for the elapsed time. */
  now: number;
  busy: boolean;
  highlighted: boolean;
}): JSX.Element {
  const { job, actions, now, busy, highlighted } = props;
  const ref = useRef<HTMLLIElement>(null);
  useEffect(() => {
    if (highlighted) {
      ref.current?.scrollIntoView({ block: 'nearest' });
    }
  }, [highlighted]);
  const elapsed = elapsedSeconds(job, now);
  const when =
    job.state === 'queued'
      ? `Waiting for ${formatClock(elapsed)}`
      : `Ran for ${formatClock(elapsed)}`;
  const facts = [
    job.backend + (job.queue ? ` · ${job.queue}` : ''),
    describeRuntime(job),
    describeResources(job.resources)
  ].filter(Boolean);
  return (
    <li
      ref={ref}
      className={
        'jp-GpuEnv-job' + (highlighted ? ' jp-GpuEnv-job-highlighted' : '')
      }
      data-testid="gpu-env-job"
      data-id={job.id}
      data-state={job.state}
      data-name={job.name}
    >
      <div className="jp-GpuEnv-jobHeader">
        <span
          className={`jp-GpuEnv-jobState jp-GpuEnv-jobState-${job.state}`}
          data-testid="gpu-env-job-state"
        >
          {job.state}
        </span>
        <span
          className="jp-GpuEnv-jobName"
          title={`${job.notebook_path}\nSubmitted ${formatTime(job.created_at)}`}
        >
          {job.name}
        </span>
        <span
          className="jp-GpuEnv-jobElapsed"
          title={when}
          data-testid="gpu-env-job-elapsed"
        >
          {formatClock(elapsed)}
        </span>
        <Actions job={job} actions={actions} busy={busy} />
      </div>
      <Progress job={job} />
      <Detail job={job} />
      <div className="jp-GpuEnv-jobMeta">{facts.join(' · ')}</div>
    </li>
  );
}
