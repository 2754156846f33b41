/**
 * A sweep's results as a chart: one recorded value against one parameter,
 * drawn in SVG with round axis ticks.
 */
import { HTMLSelect } from '@jupyterlab/ui-components';
import React, { useState } from 'react';

import type { ISweepResults } from '../../api/types';
import { HorizontalLine } from '../../components/figures/hline';
import { formatValue, valueLabel } from './values';

/** Round, readable steps between `min` and `max` (about `count`). */
export function ticks(min: number, max: number, count = 5): number[] {
  if (!(max > min)) {
    return [min];
  }
  const raw = (max - min) / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step =
    [1, 2, 2.5, 5, 10].map(f => f * power).find(s => s >= raw) ?? raw;
  const result: number[] = [];
  for (
    let v = Math.ceil(min / step) * step;
    v <= max + step * 1e-9;
    v += step
  ) {
    result.push(Number(v.toPrecision(12)));
  }
  return result;
}

/** A labelled choice of one of the results' columns. */
function ColumnChoice(props: {
  label: string;
  value: string;
  choices: string[];
  testId: string;
  onChange: (name: string) => void;
  /** How a choice reads (its name by default). */
  labelOf?: (name: string) => string;
}): JSX.Element {
  return (
    <label className="jp-GpuEnv-chartChoice">
      {props.label}{' '}
      <HTMLSelect
        value={props.value}
        data-testid={props.testId}
        onChange={event => props.onChange(event.target.value)}
        options={props.choices.map(name => ({
          value: name,
          label: props.labelOf ? props.labelOf(name) : name
        }))}
      />
    </label>
  );
}

const WIDTH = 520;
const HEIGHT = 260;
// The left margin holds the y ticks and, turned, the y axis's name.
const MARGIN = { top: 12, right: 16, bottom: 40, left: 72 };

/** One recorded value against one parameter, as points (and a line). */
export function Chart(props: { results: ISweepResults }): JSX.Element | null {
  const { results } = props;
  const numeric = results.value_columns.filter(name =>
    results.rows.some(row => typeof row.values[name] === 'number')
  );
  const [xName, setX] = useState<string>(results.parameter_columns[0] ?? '');
  const [yName, setY] = useState<string>(numeric[0] ?? '');
  const x = results.parameter_columns.includes(xName)
    ? xName
    : (results.parameter_columns[0] ?? '');
  const y = numeric.includes(yName) ? yName : (numeric[0] ?? '');
  // A recorded value named like a parameter reads "value: alpha".
  const yLabel = (name: string): string =>
    valueLabel(name, results.parameter_columns);
  if (!x || !y) {
    return (
      <div className="jp-GpuEnv-note" data-testid="gpu-env-sweep-chart">
        {results.value_columns.length === 0
          ? 'No run has recorded a value yet. A run records the dict of a ' +
            'code cell tagged “results” (its last expression) and the ' +
            'values glued with scrapbook.'
          : 'No recorded value is a number: nothing to chart.'}
      </div>
    );
  }
  const points = results.rows
    .filter(row => typeof row.values[y] === 'number')
    .map(row => ({ row, px: row.parameters[x], py: row.values[y] as number }));
  const xNumeric = points.every(p => typeof p.px === 'number');
  const categories = xNumeric
    ? []
    : [...new Set(points.map(p => formatValue(p.px)))];
  const xs = points.map(p => p.px as number);
  const ys = points.map(p => p.py);
  const [xMin, xMax] = xNumeric
    ? [Math.min(...xs), Math.max(...xs)]
    : [0, Math.max(1, categories.length - 1)];
  const [yMin, yMax] = [Math.min(...ys), Math.max(...ys)];
  const innerW = WIDTH - MARGIN.left - MARGIN.right;
  const innerH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const pad = (lo: number, hi: number): [number, number] =>
    hi > lo ? [lo, hi] : [lo - 1, hi + 1];
  const [x0, x1] = xNumeric ? pad(xMin, xMax) : [-0.5, xMax + 0.5];
  const [y0, y1] = pad(yMin, yMax);
  const sx = (v: number): number =>
    MARGIN.left + ((v - x0) / (x1 - x0)) * innerW;
  const sy = (v: number): number =>
    MARGIN.top + innerH - ((v - y0) / (y1 - y0)) * innerH;
  const xOf = (p: (typeof points)[number]): number =>
    xNumeric ? (p.px as number) : categories.indexOf(formatValue(p.px));
  // A line where each x has one point (one parameter varied).
  const unique = new Set(points.map(xOf)).size === points.length;
  const line = unique
    ? [...points]
        .sort((a, b) => xOf(a) - xOf(b))
        .map(p => `${sx(xOf(p)).toFixed(1)},${sy(p.py).toFixed(1)}`)
        .join(' ')
    : '';
  const xTicks = xNumeric ? ticks(x0, x1) : categories.map((_, i) => i);
  const yTicks = ticks(y0, y1);
  return (
    <div className="jp-GpuEnv-sweepChart" data-testid="gpu-env-sweep-chart">
      <div className="jp-GpuEnv-sweepChartControls">
        <ColumnChoice
          label="Value"
          value={y}
          choices={numeric}
          testId="gpu-env-sweep-chart-y"
          onChange={setY}
          labelOf={yLabel}
        />
        <ColumnChoice
          label="against"
          value={x}
          choices={results.parameter_columns}
          testId="gpu-env-sweep-chart-x"
          onChange={setX}
        />
      </div>
      <svg
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        role="img"
        aria-label={`${yLabel(y)} against ${x}`}
      >
        <g className="jp-GpuEnv-chartGrid">
          {yTicks.map(t => (
            <g key={`y${t}`}>
              <HorizontalLine
                x1={MARGIN.left}
                x2={WIDTH - MARGIN.right}
                y={sy(t)}
              />
              <text
                x={MARGIN.left - 6}
                y={sy(t)}
                textAnchor="end"
                dominantBaseline="middle"
              >
                {formatValue(t)}
              </text>
            </g>
          ))}
          {xTicks.map(t => (
            <text
              key={`x${t}`}
              x={sx(t)}
              y={HEIGHT - MARGIN.bottom + 14}
              textAnchor="middle"
            >
              {xNumeric ? formatValue(t) : categories[t]}
            </text>
          ))}
        </g>
        <HorizontalLine
          className="jp-GpuEnv-chartAxis"
          x1={MARGIN.left}
          x2={WIDTH - MARGIN.right}
          y={MARGIN.top + innerH}
        />
        <text
          className="jp-GpuEnv-chartLabel"
          x={MARGIN.left + innerW / 2}
          y={HEIGHT - 6}
          textAnchor="middle"
        >
          {x}
        </text>
        <text
          className="jp-GpuEnv-chartLabel"
          data-testid="gpu-env-sweep-chart-y-label"
          transform={`translate(14 ${MARGIN.top + innerH / 2}) rotate(-90)`}
          textAnchor="middle"
        >
          {yLabel(y)}
        </text>
        {line && <polyline className="jp-GpuEnv-chartLine" points={line} />}
        {points.map(p => (
          <circle
            key={p.row.job_id}
            className="jp-GpuEnv-chartPoint"
            cx={sx(xOf(p))}
            cy={sy(p.py)}
            r={4}
            data-state={p.row.state}
          >
            <title>{`${x}=${formatValue(p.px)}: ${yLabel(y)}=${formatValue(p.py)} (run ${p.row.index + 1})`}</title>
          </circle>
        ))}
      </svg>
    </div>
  );
}
