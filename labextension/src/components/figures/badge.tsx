/**
 * StateBadge: a state in a small coloured badge, the one way every row shows
 * a job's, a sweep's, a pipeline's, a node's, a schedule's or a cluster's
 * state (`jp-GpuEnv-badge`, its colour in `data-tone`).
 */
import React from 'react';

/** The tone of the states that jobs, sweeps, pipelines and their nodes share. */
export const STATE_TONES: Readonly<Record<string, string>> = {
  running: 'brand',
  succeeded: 'success',
  failed: 'error',
  cancelled: 'warn',
  skipped: 'warn'
};

export function StateBadge(props: {
  /** The state, shown as written. */
  state: string;
  /** The text instead of the state (e.g. "paused" for an inactive schedule). */
  label?: string;
  /** The tone instead of the state's own (`STATE_TONES`); none: plain. */
  tone?: string;
  /** The `data-testid`; `gpu-env-job-state` unless given (null: none). */
  testId?: string | null;
  title?: string;
}): JSX.Element {
  const { state, testId = 'gpu-env-job-state' } = props;
  return (
    <span
      className="jp-GpuEnv-badge"
      data-tone={props.tone ?? STATE_TONES[state]}
      data-testid={testId ?? undefined}
      title={props.title}
    >
      {props.label ?? state}
    </span>
  );
}
