/**
 * The Jobs view's rows: a job (or a sweep's run, one step in) and a sweep
 * that expands to its runs, each cell from the row's facts, and the row's
 * actions (a pipeline's rows are in pipelines/cells.tsx, its own row a
 * GroupTableRow as a sweep's). Every action goes
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
import { JobActionButtons, KindBadge } from '../row';
import { SweepActionButtons } from '../sweeps/row';
import { describeGpuMeanPeak, IRowFacts } from './rows';
import { AttemptsBadge, PriorityBadge } from '../run/attempts';
import { energyCell, IEnergyText } from '../run/energy';

/** The cells every row has, from the state to the parameters. */
export function FactCells(props: {
  facts: IRowFacts;
  now: number;
  queueTitle?: string;
  gpu?: { text: string | null; title: string };
  /** The energy cell: the kWh, and CO2e, cost and note in its tooltip. */
  energy?: IEnergyText;
  backendTitle?: string;
}): JSX.Element {
  const { facts, now, gpu, energy } = props;
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
        data-column="energy"
        className="jp-GpuEnv-jobsNumber"
        title={energy?.title || undefined}
      >
        {energy?.text ?? ''}
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
        <KindBadge job={job} />
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
        energy={energyCell(job.gpu)}
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

/**
 * A row that stands for several (a sweep's runs, a pipeline's nodes): its
 * caret, its name with what it counts beside it, its facts and its actions;
 * the rows it expands to follow it, one step in.
 */
export function GroupTableRow(props: {
  kind: string;
  id: string;
  name: string;
  state: string;
  expanded: boolean;
  onToggle: () => void;
  /** What it expands to, in the caret's words: `runs`, `nodes`. */
  parts: string;
  /** The name's tooltip. */
  title?: string;
  /** Beside the name: what it counts. */
  count: React.ReactNode;
  facts: IRowFacts;
  now: number;
  /** Its actions. */
  children: React.ReactNode;
}): JSX.Element {
  const { name, expanded, parts } = props;
  const verb = expanded ? 'Hide' : 'Show';
  return (
    <tr
      data-testid="gpu-env-jobs-row"
      data-kind={props.kind}
      data-id={props.id}
      data-name={name}
      data-state={props.state}
      data-expanded={expanded}
    >
      <td className="jp-GpuEnv-jobsToggle">
        <ExpandToggle
          expanded={expanded}
          onToggle={props.onToggle}
          label={`${verb} the ${parts} of ${name}`}
          title={`${verb} the ${parts}`}
        />
      </td>
      <td data-column="name" className="jp-GpuEnv-jobsName" title={props.title}>
        {name} {props.count}
      </td>
      <FactCells facts={props.facts} now={props.now} />
      <td className="jp-GpuEnv-jobsActions">{props.children}</td>
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
    <GroupTableRow
      kind="sweep"
      id={id}
      name={facts.name}
      state={facts.state}
      expanded={expanded}
      onToggle={() => model.setExpanded(id, !expanded, 'view')}
      parts="runs"
      title={props.notebook ? `Sweep of ${props.notebook}` : undefined}
      count={
        <span className="jp-GpuEnv-note">
          ({size} {size === 1 ? 'run' : 'runs'})
        </span>
      }
      facts={facts}
      now={now}
    >
      <SweepActionButtons id={id} name={facts.name} commands={commands} />
    </GroupTableRow>
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
