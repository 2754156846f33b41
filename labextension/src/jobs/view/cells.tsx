/**
 * The Jobs view's rows: a job (or a sweep's run, one step in) and a sweep
 * that expands to its runs, each cell from the row's facts, and the row's
 * actions (a pipeline's rows are in pipelines/cells.tsx). Every action goes
 * through the jobs' actions or commands, so the sidebar, the palette and
 * this table do the same thing.
 */
import React from 'react';

import type { IJob } from '../../api/types';
import { JobActions } from '../actions';
import {
  describeGpuDetail,
  describeRuntime,
  formatClock,
  formatStart,
  formatTime,
  ordinal
} from '../format';
import { StateBadge } from '../../components/figures/badge';
import { ExpandToggle } from '../../components/row';
import { JobActionButtons } from '../row';
import { SweepActionButtons } from '../sweeps/row';
import { describeGpuMeanPeak, IRowFacts } from './rows';
import { AttemptsBadge, PriorityBadge } from '../run/attempts';

/** The cells every row has, from the state to the parameters. */
export function FactCells(props: {
  facts: IRowFacts;
  now: number;
  queueTitle?: string;
  gpu?: { text: string | null; title: string };
  backendTitle?: string;
}): JSX.Element {
  const { facts, now, gpu } = props;
  return (
    <>
      <td data-column="state">
        <StateBadge state={facts.state} />
      </td>
      <td data-column="backend" title={props.backendTitle}>
        {facts.backend}
      </td>
      <td
        data-column="queue"
        className="jp-GpuEnv-jobsNumber"
        title={props.queueTitle}
      >
        {facts.queue === null ? '' : ordinal(facts.queue)}
      </td>
      <td
        data-column="started"
        title={facts.started === null ? undefined : formatTime(facts.started)}
      >
        {facts.started === null ? '' : formatStart(facts.started, now)}
      </td>
      <td data-column="duration" className="jp-GpuEnv-jobsNumber">
        {facts.duration === null ? '' : formatClock(facts.duration)}
      </td>
      <td data-column="gpu" title={gpu?.title}>
        {gpu?.text ?? ''}
      </td>
      <td
        data-column="parameters"
        className="jp-GpuEnv-jobsParams"
        title={facts.parameters}
      >
        {facts.parameters}
      </td>
    </>
  );
}

/** A job's row; a sweep's run (`run`) sits one step in, under its sweep. */
export function JobTableRow(props: {
  job: IJob;
  facts: IRowFacts;
  actions: JobActions;
  now: number;
  run?: boolean;
}): JSX.Element {
  const { job, facts, actions, now, run } = props;
  const gpuText = describeGpuMeanPeak(job.gpu);
  return (
    <tr
      data-testid={run ? 'gpu-env-jobs-run' : 'gpu-env-jobs-row'}
      data-kind="job"
      data-id={job.id}
      data-name={job.name}
      data-state={job.state}
    >
      <td className="jp-GpuEnv-jobsToggle" />
      <td
        data-column="name"
        className="jp-GpuEnv-jobsName"
        data-run={run ? 'true' : undefined}
        title={[
          job.notebook_path,
          describeRuntime(job),
          `Submitted ${formatTime(job.created_at)}`
        ]
          .filter(Boolean)
          .join('\n')}
      >
        {job.name}
        <PriorityBadge job={job} />
        <AttemptsBadge job={job} />
      </td>
      <FactCells
        facts={facts}
        now={now}
        backendTitle={job.queue ? `Queue ${job.queue}` : undefined}
        queueTitle={
          [
            job.queue_name ? `Queue ${job.queue_name}` : null,
            job.estimated_start !== null
              ? `Estimated start ${formatTime(job.estimated_start)}`
              : null,
            job.pending_reason
          ]
            .filter(Boolean)
            .join('\n') || undefined
        }
        gpu={{ text: gpuText, title: describeGpuDetail(job.gpu) }}
      />
      <td className="jp-GpuEnv-jobsActions">
        <JobActionButtons
          job={job}
          actions={actions}
          busy={actions.model.isBusy(job.id)}
          rerunWhileActive
        />
      </td>
    </tr>
  );
}

/** A sweep's row: its toggle, its facts, its results and menu. */
export function SweepTableRow(props: {
  id: string;
  facts: IRowFacts;
  size: number;
  notebook: string | null;
  expanded: boolean;
  actions: JobActions;
  now: number;
}): JSX.Element {
  const { id, facts, size, expanded, actions, now } = props;
  const { commands, model } = actions;
  return (
    <tr
      data-testid="gpu-env-jobs-row"
      data-kind="sweep"
      data-id={id}
      data-name={facts.name}
      data-state={facts.state}
      data-expanded={expanded}
    >
      <td className="jp-GpuEnv-jobsToggle">
        <ExpandToggle
          expanded={expanded}
          onToggle={() => model.setExpanded(id, !expanded)}
          label={`${expanded ? 'Hide' : 'Show'} the runs of ${facts.name}`}
          title={expanded ? 'Hide the runs' : 'Show the runs'}
        />
      </td>
      <td
        data-column="name"
        className="jp-GpuEnv-jobsName"
        title={props.notebook ? `Sweep of ${props.notebook}` : undefined}
      >
        {facts.name}{' '}
        <span className="jp-GpuEnv-note">
          ({size} {size === 1 ? 'run' : 'runs'})
        </span>
      </td>
      <FactCells facts={facts} now={now} />
      <td className="jp-GpuEnv-jobsActions">
        <SweepActionButtons id={id} name={facts.name} commands={commands} />
      </td>
    </tr>
  );
}

/** A line across the table under an expanded sweep (waiting, or cut). */
export function NoteRow(props: {
  columns: number;
  children: React.ReactNode;
}): JSX.Element {
  return (
    <tr className="jp-GpuEnv-jobsNoteRow">
      <td />
      <td colSpan={props.columns - 1} className="jp-GpuEnv-note">
        {props.children}
      </td>
    </tr>
  );
}
