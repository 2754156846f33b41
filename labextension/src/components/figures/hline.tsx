/**
 * A horizontal line across an SVG chart: a limit, a grid line, an axis.
 */
import React from 'react';

export function HorizontalLine(props: {
  /** Where it stands, in the chart's units. */
  y: number;
  /** Where it starts (0: the left edge) and ends. */
  x1?: number;
  x2: number;
  className?: string;
  /** One pixel wide however the chart is stretched. */
  nonScaling?: boolean;
}): JSX.Element {
  return (
    <line
      className={props.className}
      x1={props.x1 ?? 0}
      x2={props.x2}
      y1={props.y}
      y2={props.y}
      vectorEffect={props.nonScaling ? 'non-scaling-stroke' : undefined}
    />
  );
}
