/**
 * A labelled horizontal bar: "Memory   1.2 GiB of 4.0 GiB · 30 %".
 */
import React from 'react';

import { percentOf, usageLevel } from '../format';
import { ProgressBar } from './progress';

export interface IUsageBarProps {
  /** What is measured, e.g. "Memory". */
  label: string;
  /** Amount used, in the bar's unit (bytes, cores). */
  used: number;
  /** Amount available, in the same unit. */
  total: number;
  /** The figure shown right of the label, e.g. "1.2 GiB of 4.0 GiB". */
  value: string;
  /** A discreet line under the bar, e.g. "cgroup v2 limit". */
  note?: string;
  /** Extra class names for the bar itself (e.g. `jp-GpuEnv-memoryBar`). */
  className?: string;
  /** `data-testid` of the bar. */
  testId?: string;
  /** Extra `data-*` attributes of the bar (raw numbers for tests and tooling). */
  data?: Record<string, string | number>;
  /** Whether the figures are unknown yet (bar drawn empty, no percent). */
  pending?: boolean;
}

/**
 * A usage bar coloured by how full it is: brand colour, warning above 80 %,
 * error above 95 %.
 */
export function UsageBar(props: IUsageBarProps): JSX.Element {
  const percent = props.pending ? 0 : percentOf(props.used, props.total);
  const level = props.pending ? 'ok' : usageLevel(percent);
  const rounded = Math.round(percent);
  return (
    <div className="jp-GpuEnv-usage">
      <div className="jp-GpuEnv-usageHeader">
        <span className="jp-GpuEnv-usageLabel">{props.label}</span>
        <span
          className="jp-GpuEnv-usageValue"
          title={props.pending ? props.value : `${props.value} · ${rounded} %`}
        >
          {props.value}
          {!props.pending && (
            <span className="jp-GpuEnv-usagePercent">{rounded} %</span>
          )}
        </span>
      </div>
      <ProgressBar
        percent={percent}
        level={level}
        label={`${props.label}: ${props.value}`}
        valueNow={rounded}
        className={props.className}
        testId={props.testId}
        data={props.data}
      />
      {props.note && <div className="jp-GpuEnv-note">{props.note}</div>}
    </div>
  );
}
