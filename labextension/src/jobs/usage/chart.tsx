/**
 * The usage at the top of the Jobs section: the week's hours, GPU-hours
 * allocated against used per backend (with the efficiency) and the GPU
 * energy measured (with CO2e and cost where the site set them), and the last
 * weeks as bars, GPU-hours (allocated and used) or kWh, with their CSV.
 */
import { Button, downloadIcon } from '@jupyterlab/ui-components';
import React, { useState } from 'react';

import type { IBackendUsage, IUsageReport, IUsageWeeks } from '../../api/types';
import { downloadUrl } from '../../components/download';
import { HorizontalLine } from '../../components/figures/hline';
import { JobsClient } from '../client';
import {
  describeBackendGpuHours,
  describeEfficiency,
  describeUsage,
  describeNoGpuHours,
  describeUsageDetail,
  formatHours,
  jobCount
} from '../format';
import {
  backendEnergy,
  describeNoEnergy,
  formatKwh,
  weekEnergyTitle
} from '../run/energy';
import { USAGE_WEEKS } from './model';

const WIDTH = 240;
const HEIGHT = 60;
const LABEL = 12;

/** `3 Jun`: the Monday a week starts. */
function weekLabel(weekStart: number): string {
  return new Date(weekStart * 1000).toLocaleDateString(undefined, {
    day: 'numeric',
    month: 'short'
  });
}

/** What the weeks' chart shows: GPU-hours, or the GPU energy in kWh. */
export type WeeksMeasure = 'hours' | 'energy';

/**
 * Two bars a week: GPU-hours allocated, and used within them; or one, the
 * kWh the GPUs drew (`measure: 'energy'`).
 */
/** The first and the last week's date under a chart; none under the others. */
function EdgeLabel(props: {
  index: number;
  count: number;
  week: { week_start: number };
}): JSX.Element | null {
  const { index, count, week } = props;
  if (index !== 0 && index !== count - 1) {
    return null;
  }
  return (
    <text
      className="jp-GpuEnv-weekLabel"
      x={index === 0 ? 0 : WIDTH}
      y={HEIGHT + LABEL - 2}
      textAnchor={index === 0 ? 'start' : 'end'}
    >
      {weekLabel(week.week_start)}
    </text>
  );
}

export function WeeksChart(props: {
  weeks: IUsageWeeks;
  measure?: WeeksMeasure;
}): JSX.Element {
  const weeks = props.weeks.weeks;
  if (props.measure === 'energy') {
    return <EnergyChart weeks={props.weeks} />;
  }
  const top = Math.max(
    ...weeks.map(w => Math.max(w.total.gpu_hours, w.total.gpu_hours_used)),
    0
  );
  const slot = weeks.length ? WIDTH / weeks.length : WIDTH;
  const bar = Math.max(2, slot / 2 - 2);
  const height = (hours: number) =>
    top > 0 ? Math.max(0, (hours / top) * HEIGHT) : 0;
  return (
    <figure className="jp-GpuEnv-weeksChart" data-testid="gpu-env-usage-weeks">
      <svg
        viewBox={`0 0 ${WIDTH} ${HEIGHT + LABEL}`}
        role="img"
        aria-label={`GPU-hours allocated and used over the last ${weeks.length} weeks`}
      >
        <HorizontalLine
          className="jp-GpuEnv-gpuChartGrid"
          x2={WIDTH}
          y={HEIGHT}
        />
        {weeks.map((week, i) => {
          const x = i * slot + 1;
          const allocated = height(week.total.gpu_hours);
          const used = height(week.total.gpu_hours_used);
          const title =
            `Week of ${weekLabel(week.week_start)}: ` +
            `${formatHours(week.total.gpu_hours)} GPU-h allocated, ` +
            `${formatHours(week.total.gpu_hours_used)} used ` +
            `(efficiency ${describeEfficiency(week.total)})`;
          return (
            <g key={week.week_start} data-testid="gpu-env-usage-week">
              <title>{title}</title>
              <rect
                className="jp-GpuEnv-weekAllocated"
                x={x}
                y={HEIGHT - allocated}
                width={bar}
                height={allocated}
              />
              <rect
                className="jp-GpuEnv-weekUsed"
                x={x + bar + 1}
                y={HEIGHT - used}
                width={bar}
                height={used}
              />
              <EdgeLabel index={i} count={weeks.length} week={week} />
            </g>
          );
        })}
      </svg>
      {top === 0 ? (
        // Empty weeks still show as weeks; the sentence says why they are empty.
        <figcaption
          className="jp-GpuEnv-note"
          data-testid="gpu-env-usage-weeks-empty"
        >
          {describeNoGpuHours(weeks.length)}
        </figcaption>
      ) : (
        <figcaption className="jp-GpuEnv-note">
          <span className="jp-GpuEnv-gpuChartKey" data-series="allocated">
            allocated
          </span>
          <span className="jp-GpuEnv-gpuChartKey" data-series="used">
            used
          </span>
          <span>GPU-hours per week, up to {formatHours(top)}</span>
        </figcaption>
      )}
    </figure>
  );
}

/** One bar a week: the kWh the GPUs of the jobs that measured it drew. */
function EnergyChart(props: { weeks: IUsageWeeks }): JSX.Element {
  const weeks = props.weeks.weeks;
  const top = Math.max(...weeks.map(w => w.total.gpu_energy_kwh), 0);
  const slot = weeks.length ? WIDTH / weeks.length : WIDTH;
  const bar = Math.max(2, slot - 4);
  return (
    <figure
      className="jp-GpuEnv-weeksChart"
      data-testid="gpu-env-usage-weeks"
      data-measure="energy"
    >
      <svg
        viewBox={`0 0 ${WIDTH} ${HEIGHT + LABEL}`}
        role="img"
        aria-label={`GPU energy over the last ${weeks.length} weeks`}
      >
        <HorizontalLine
          className="jp-GpuEnv-gpuChartGrid"
          x2={WIDTH}
          y={HEIGHT}
        />
        {weeks.map((week, i) => {
          const kwh = week.total.gpu_energy_kwh;
          const height = top > 0 ? Math.max(0, (kwh / top) * HEIGHT) : 0;
          return (
            <g key={week.week_start} data-testid="gpu-env-usage-week">
              <title>
                {weekEnergyTitle(weekLabel(week.week_start), week.total)}
              </title>
              <rect
                className="jp-GpuEnv-weekEnergy"
                x={i * slot + 1}
                y={HEIGHT - height}
                width={bar}
                height={height}
              />
              <EdgeLabel index={i} count={weeks.length} week={week} />
            </g>
          );
        })}
      </svg>
      {top === 0 ? (
        <figcaption
          className="jp-GpuEnv-note"
          data-testid="gpu-env-usage-weeks-empty"
        >
          {describeNoEnergy(weeks.length)}
        </figcaption>
      ) : (
        <figcaption className="jp-GpuEnv-note">
          <span className="jp-GpuEnv-gpuChartKey" data-series="energy">
            GPU energy
          </span>
          <span>kWh per week, up to {formatKwh(top)}</span>
        </figcaption>
      )}
    </figure>
  );
}

/** GPU-hours or kWh: two pressed-or-not buttons above the chart. */
function MeasureChoice(props: {
  measure: WeeksMeasure;
  onChange: (measure: WeeksMeasure) => void;
}): JSX.Element {
  const choices: [WeeksMeasure, string][] = [
    ['hours', 'GPU-hours'],
    ['energy', 'Energy (kWh)']
  ];
  return (
    <div
      className="jp-GpuEnv-weeksMeasure"
      role="group"
      aria-label="What the chart shows"
    >
      {choices.map(([measure, label]) => (
        <Button
          key={measure}
          small
          minimal
          aria-pressed={props.measure === measure}
          data-testid={`gpu-env-usage-measure-${measure}`}
          onClick={() => props.onChange(measure)}
        >
          {label}
        </Button>
      ))}
    </div>
  );
}

/** A backend's line: its GPU-hours, then its energy where there is some. */
function BackendLine(props: {
  name: string;
  usage: IBackendUsage;
}): JSX.Element {
  const { name, usage } = props;
  const energy = backendEnergy(usage);
  return (
    <li data-backend={name}>
      {describeBackendGpuHours(name, usage)}
      {energy && (
        <>
          {' · '}
          <span data-testid="gpu-env-usage-energy" title={energy.title}>
            {energy.text}
          </span>
        </>
      )}
    </li>
  );
}

export function UsagePanel(props: {
  usage: IUsageReport;
  weeks: IUsageWeeks | null;
  client: JobsClient;
}): JSX.Element {
  const { usage, weeks, client } = props;
  const [measure, setMeasure] = useState<WeeksMeasure>('hours');
  const backends = Object.entries(usage.backends).filter(
    ([, b]) => b.gpu_hours > 0 || jobCount(b) > 0
  );
  return (
    <div
      className="jp-GpuEnv-jobUsage"
      data-testid="gpu-env-jobs-usage"
      title={describeUsageDetail(usage)}
    >
      <div data-testid="gpu-env-jobs-usage-line">{describeUsage(usage)}</div>
      {backends.length > 0 && (
        <ul
          className="jp-GpuEnv-usageBackends jp-GpuEnv-note"
          data-testid="gpu-env-usage-backends"
        >
          {backends.map(([name, b]) => (
            <BackendLine key={name} name={name} usage={b} />
          ))}
        </ul>
      )}
      {weeks && weeks.weeks.length > 0 && (
        <details className="jp-GpuEnv-usageWeeks">
          <summary data-testid="gpu-env-usage-weeks-toggle">
            GPU-hours and energy, last {weeks.weeks.length} weeks
          </summary>
          <MeasureChoice measure={measure} onChange={setMeasure} />
          <WeeksChart weeks={weeks} measure={measure} />
          <Button
            small
            minimal
            data-testid="gpu-env-usage-csv"
            title="The weeks per backend as CSV"
            onClick={() =>
              downloadUrl(client.usageWeeksCsvUrl(USAGE_WEEKS), 'gpu-usage.csv')
            }
          >
            <downloadIcon.react tag="span" className="jp-GpuEnv-inlineIcon" />{' '}
            Download CSV
          </Button>
        </details>
      )}
    </div>
  );
}
