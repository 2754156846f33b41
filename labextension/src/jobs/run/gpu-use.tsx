/**
 * A job's GPU use in its row: one line (`GPU 23% avg · 3.1 of 80 GiB
 * peak`) that opens the details, a chart of utilization and memory over
 * time from `GET jobs/{id}/gpu`, asked again while the job runs, and the
 * energy its GPUs drew (with CO2e and cost where the site set them); and the
 * badge of a GPU idling too long.
 */
import React, { useEffect, useState } from 'react';

import { messageOf } from '../../api/request';
import type { IJob, IJobGpuSeries } from '../../api/types';
import { formatBytes } from '../../components/format';
import { HorizontalLine } from '../../components/figures/hline';
import { useSignals } from '../../components/hooks';
import { PolledModel, TickPhase } from '../../components/polled';
import { JobsClient } from '../client';
import {
  describeGpuDetail,
  describeGpuUse,
  formatClock,
  formatDuration,
  isGpuIdle
} from '../format';
import { jobEnergy } from './energy';

/** Milliseconds between two reads of the series while the job runs. */
export const SERIES_INTERVAL = 5000;

/** Reads a job's GPU series: again while it runs, once after it ended. */
export class JobGpuModel extends PolledModel {
  constructor(
    private readonly _client: JobsClient,
    private readonly _id: string
  ) {
    super({
      name: `jupyter-gpu-env:job-gpu:${_id}`,
      interval: SERIES_INTERVAL,
      maxBackoff: 60000
    });
  }

  /** Whether the job still runs (new samples may come). */
  running = false;

  get series(): IJobGpuSeries | null {
    return this._series;
  }

  protected async fetch(phase: TickPhase): Promise<void | false> {
    if (phase === 'resolved' && this._series && !this.running) {
      return false;
    }
    this._series = await this._client.gpuSeries(this._id);
  }

  private _series: IJobGpuSeries | null = null;
}

const WIDTH = 280;
const HEIGHT = 72;

/** `[seconds since start, [utilization % per device], [memory bytes per device]]`. */
type Point = [number, (number | null)[], (number | null)[]];

/** The series' points, typed as the tuples the server sends. */
function pointsOf(series: IJobGpuSeries): Point[] {
  return series.points as unknown as Point[];
}

/** Mean utilization over the devices measured, or null for none. */
function utilizationOf(point: Point): number | null {
  const values = point[1].filter((v): v is number => v !== null);
  return values.length
    ? values.reduce((a, b) => a + b, 0) / values.length
    : null;
}

/** Memory used over all devices, as a share of their memory (0..1). */
function memoryShareOf(point: Point, total: number): number | null {
  const values = point[2].filter((v): v is number => v !== null);
  if (!values.length || !(total > 0)) {
    return null;
  }
  return values.reduce((a, b) => a + b, 0) / total;
}

/** An SVG polyline's points; gaps (null) break nothing, they are left out. */
function polyline(
  points: Point[],
  value: (point: Point) => number | null,
  span: number
): string {
  return points
    .map(point => {
      const v = value(point);
      if (v === null) {
        return null;
      }
      const x = span > 0 ? (point[0] / span) * WIDTH : 0;
      const y = HEIGHT - Math.max(0, Math.min(1, v)) * HEIGHT;
      return `${x.toFixed(1)},${y.toFixed(1)}`;
    })
    .filter(Boolean)
    .join(' ');
}

/** Utilization (0–100 %) and memory (share of the total) over time. */
export function GpuChart(props: { series: IJobGpuSeries }): JSX.Element {
  const { series } = props;
  const points = pointsOf(series);
  const total =
    series.summary?.memory_total_bytes ??
    series.devices.reduce((a, d) => a + (d.memory_total_bytes ?? 0), 0);
  const span = points.length ? points[points.length - 1][0] : 0;
  const util = polyline(
    points,
    p => {
      const u = utilizationOf(p);
      return u === null ? null : u / 100;
    },
    span
  );
  const memory = polyline(points, p => memoryShareOf(p, total), span);
  const peak = series.summary?.peak_memory_bytes ?? null;
  return (
    <figure className="jp-GpuEnv-gpuChart" data-testid="gpu-env-job-gpu-chart">
      <svg
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        preserveAspectRatio="none"
        role="img"
        aria-label={`GPU utilization and memory over ${formatClock(span)}`}
      >
        <HorizontalLine
          className="jp-GpuEnv-gpuChartGrid"
          x2={WIDTH}
          y={HEIGHT / 2}
        />
        {memory && (
          <polyline
            className="jp-GpuEnv-gpuChartMemory"
            data-testid="gpu-env-job-gpu-memory-line"
            points={memory}
          />
        )}
        {util && (
          <polyline
            className="jp-GpuEnv-gpuChartUtil"
            data-testid="gpu-env-job-gpu-util-line"
            points={util}
          />
        )}
      </svg>
      <figcaption className="jp-GpuEnv-note">
        {util && (
          <span className="jp-GpuEnv-gpuChartKey" data-series="util">
            utilization (0–100%)
          </span>
        )}
        {memory && (
          <span className="jp-GpuEnv-gpuChartKey" data-series="memory">
            memory{total > 0 ? ` (of ${formatBytes(total)})` : ''}
            {peak !== null ? `, peak ${formatBytes(peak)}` : ''}
          </span>
        )}
        <span>
          {points.length} samples over {formatClock(span)}
        </span>
      </figcaption>
    </figure>
  );
}

/** The details under the row: the chart, the facts, the notes. */
function GpuDetails(props: { job: IJob; client: JobsClient }): JSX.Element {
  const { job, client } = props;
  const [model] = useState(() => new JobGpuModel(client, job.id));
  useSignals([model.changed]);
  useEffect(() => () => model.dispose(), [model]);
  const running = job.state === 'running';
  useEffect(() => {
    model.running = running;
    void model.refresh().catch(() => undefined);
  }, [model, running]);
  const series = model.series;
  return (
    <div
      className="jp-GpuEnv-jobGpuDetails"
      data-testid="gpu-env-job-gpu-details"
    >
      {series && series.points.length > 0 ? (
        <GpuChart series={series} />
      ) : (
        <div className="jp-GpuEnv-note">
          {model.error
            ? `Cannot read the GPU samples: ${messageOf(model.error)}`
            : series
              ? 'No samples yet.'
              : 'Reading the GPU samples…'}
        </div>
      )}
      <GpuEnergy gpu={series?.summary ?? job.gpu} />
      <div className="jp-GpuEnv-note jp-GpuEnv-gpuFacts">
        {describeGpuDetail(series?.summary ?? job.gpu)}
      </div>
    </div>
  );
}

/**
 * `GPU energy 0.42 kWh (measured) · 180 g CO2e · €1.20`, or `GPU energy not
 * measured`, the note (why, or what an estimate rests on) as its tooltip.
 */
export function GpuEnergy(props: { gpu: IJob['gpu'] }): JSX.Element | null {
  const energy = jobEnergy(props.gpu);
  if (!energy) {
    return null;
  }
  return (
    <div
      className="jp-GpuEnv-note jp-GpuEnv-jobEnergy"
      data-testid="gpu-env-job-energy"
      data-measured={props.gpu?.energy_joules !== null}
      title={energy.title || undefined}
    >
      {energy.text}
    </div>
  );
}

/**
 * The row's GPU line, a button that shows the details; nothing where the
 * job has no GPU numbers (the reason is in `describeGpuDetail`).
 */
export function GpuUse(props: {
  job: IJob;
  client: JobsClient;
}): JSX.Element | null {
  const { job, client } = props;
  const [open, setOpen] = useState(false);
  const text = describeGpuUse(job.gpu);
  if (text === null) {
    return null;
  }
  return (
    <>
      <button
        type="button"
        className="jp-GpuEnv-jobGpu jp-GpuEnv-note"
        data-testid="gpu-env-job-gpu"
        aria-expanded={open}
        title={[
          describeGpuDetail(job.gpu),
          jobEnergy(job.gpu)?.text,
          '\nClick for the chart.'
        ]
          .filter(Boolean)
          .join('\n')}
        onClick={() => setOpen(!open)}
      >
        {text}
      </button>
      {open && <GpuDetails job={job} client={client} />}
    </>
  );
}

/** `GPU idle 12 min` on a running job whose GPU idles too long. */
export function GpuIdleBadge(props: {
  job: IJob;
  threshold: number;
}): JSX.Element | null {
  const { job, threshold } = props;
  if (!isGpuIdle(job, threshold) || !job.gpu) {
    return null;
  }
  return (
    <span
      className="jp-GpuEnv-badge jp-GpuEnv-gpuIdleBadge"
      data-tone="warn"
      data-testid="gpu-env-job-gpu-idle"
      title={
        `The GPU has been idle for ${formatDuration(job.gpu.idle_seconds)}: ` +
        'cancel the job if it no longer needs it.'
      }
    >
      GPU idle {formatDuration(job.gpu.idle_seconds)}
    </span>
  );
}
