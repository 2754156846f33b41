/**
 * A thin horizontal bar: usage (memory, CPU), a task's or a job's progress.
 */
import React from 'react';

import { DataAttributes, dataAttributes } from '../row';

/** The bar's colour: brand, warning, error, success. */
export type BarLevel = 'ok' | 'warn' | 'critical' | 'success';

export interface IProgressBarProps {
  /** Filled part, 0..100; null while unknown (a moving stripe). */
  percent: number | null;
  level: BarLevel;
  /** What the bar measures, for screen readers. */
  label: string;
  /** The figure screen readers hear, and its range (default 0..100). */
  valueNow?: number;
  valueMax?: number;
  /** Extra class names, e.g. `jp-GpuEnv-memoryBar`. */
  className?: string;
  testId?: string;
  /** Extra `data-*` attributes (raw numbers for tests and tooling). */
  data?: DataAttributes;
}

export function ProgressBar(props: IProgressBarProps): JSX.Element {
  const { percent } = props;
  return (
    <div
      className={`jp-GpuEnv-bar ${props.className ?? ''}`.trim()}
      role="progressbar"
      aria-label={props.label}
      aria-valuemin={0}
      aria-valuemax={props.valueMax ?? 100}
      aria-valuenow={
        props.valueNow ?? (percent === null ? undefined : Math.round(percent))
      }
      data-level={props.level}
      data-pending={percent === null || undefined}
      data-testid={props.testId}
      {...dataAttributes(props.data ?? {})}
    >
      <div
        className="jp-GpuEnv-barFill"
        style={
          percent === null ? undefined : { width: `${percent.toFixed(1)}%` }
        }
      />
    </div>
  );
}
