/**
 * A memory sparkline: an SVG line and area over the last minutes, scaled
 * from zero to the limit, with the latest figure and the peak beside it.
 */
import React from 'react';

import { formatBytes } from '../../components/format';
import { HorizontalLine } from '../../components/figures/hline';
import { ISeriesPoint } from '../held/devices';

const WIDTH = 240;
const HEIGHT = 36;

export interface ISparklineProps {
  /** What is drawn, e.g. "Host memory". */
  label: string;
  points: ISeriesPoint[];
  /** The top of the scale (the limit, or the device's memory). */
  limit: number;
  testId?: string;
}

function scaleTop(points: ISeriesPoint[], limit: number): number {
  return Math.max(limit, ...points.map(p => p.value), 1);
}

/** The SVG path of a series: `line` and the `area` under it. */
export function sparkPaths(
  points: ISeriesPoint[],
  limit: number
): { line: string; area: string } {
  if (points.length === 0) {
    return { line: '', area: '' };
  }
  const t0 = points[0].t;
  const span = Math.max(points[points.length - 1].t - t0, 1);
  const top = scaleTop(points, limit);
  const xy = points.map(p => {
    const x = points.length === 1 ? WIDTH : ((p.t - t0) / span) * WIDTH;
    const y = HEIGHT - (p.value / top) * (HEIGHT - 2) - 1;
    return `${x.toFixed(1)},${y.toFixed(1)}`;
  });
  if (xy.length === 1) {
    xy.unshift(`0,${xy[0].split(',')[1]}`);
  }
  const line = `M${xy.join('L')}`;
  const first = xy[0].split(',')[0];
  const last = xy[xy.length - 1].split(',')[0];
  return { line, area: `${line}L${last},${HEIGHT}L${first},${HEIGHT}Z` };
}

function describeSpan(points: ISeriesPoint[]): string {
  if (points.length < 2) {
    return 'just now';
  }
  const seconds = points[points.length - 1].t - points[0].t;
  return seconds >= 90
    ? `last ${Math.round(seconds / 60)} min`
    : `last ${Math.max(1, Math.round(seconds))} s`;
}

export function Sparkline(props: ISparklineProps): JSX.Element {
  const { points, limit, label } = props;
  const { line, area } = sparkPaths(points, limit);
  const latest = points.length > 0 ? points[points.length - 1].value : null;
  const peak = points.reduce((m, p) => Math.max(m, p.value), 0);
  const span = describeSpan(points);
  const limitY = HEIGHT - (limit / scaleTop(points, limit)) * (HEIGHT - 2) - 1;
  const summary =
    latest === null
      ? `${label}: no samples yet`
      : `${label}, ${span}: now ${formatBytes(latest)}, peak ${formatBytes(peak)} of ${formatBytes(limit)}`;
  return (
    <figure
      className="jp-GpuEnv-spark"
      data-testid={props.testId}
      data-points={points.length}
    >
      <figcaption className="jp-GpuEnv-sparkHeader">
        <span className="jp-GpuEnv-usageLabel">{label}</span>
        <span>
          {latest === null ? '—' : formatBytes(latest)}
          <span className="jp-GpuEnv-usagePercent jp-GpuEnv-note">
            peak {formatBytes(peak)}
          </span>
        </span>
      </figcaption>
      <svg
        className="jp-GpuEnv-sparkChart"
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        preserveAspectRatio="none"
        role="img"
        aria-label={summary}
      >
        <title>{summary}</title>
        <HorizontalLine
          className="jp-GpuEnv-sparkLimit"
          x2={WIDTH}
          y={limitY}
          nonScaling
        />
        {area && <path className="jp-GpuEnv-sparkArea" d={area} />}
        {line && (
          <path
            className="jp-GpuEnv-sparkLine"
            d={line}
            vectorEffect="non-scaling-stroke"
          />
        )}
      </svg>
      <div className="jp-GpuEnv-sparkAxis jp-GpuEnv-note">
        <span>{span}</span>
        <span>limit {formatBytes(limit)}</span>
      </div>
    </figure>
  );
}
