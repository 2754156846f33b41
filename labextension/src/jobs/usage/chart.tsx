/**
 * The usage at the top of the Jobs section: the week's hours, GPU-hours
 * allocated against used per backend (with the efficiency), and the last
 * weeks as bars (allocated and used) with their CSV.
 */
import { Button, downloadIcon } from '@jupyterlab/ui-components';
import React from 'react';

import type { IUsageReport, IUsageWeeks } from '../../api/types';
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

/** Two bars a week: GPU-hours allocated, and used within them. */
export function WeeksChart(props: { weeks: IUsageWeeks }): JSX.Element {
  const weeks = props.weeks.weeks;
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
              {(i === 0 || i === weeks.length - 1) && (
                <text
                  className="jp-GpuEnv-weekLabel"
                  x={i === 0 ? 0 : WIDTH}
                  y={HEIGHT + LABEL - 2}
                  textAnchor={i === 0 ? 'start' : 'end'}
                >
                  {weekLabel(week.week_start)}
                </text>
              )}
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

export function UsagePanel(props: {
  usage: IUsageReport;
  weeks: IUsageWeeks | null;
  client: JobsClient;
}): JSX.Element {
  const { usage, weeks, client } = props;
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
            <li key={name} data-backend={name}>
              {describeBackendGpuHours(name, b)}
            </li>
          ))}
        </ul>
      )}
      {weeks && weeks.weeks.length > 0 && (
        <details className="jp-GpuEnv-usageWeeks">
          <summary data-testid="gpu-env-usage-weeks-toggle">
            GPU-hours, last {weeks.weeks.length} weeks
          </summary>
          <WeeksChart weeks={weeks} />
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
