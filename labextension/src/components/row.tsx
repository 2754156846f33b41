/**
 * A row of a section's list (an environment, an image, a job): the classes
 * `jp-GpuEnv-row jp-GpuEnv-<kind>`, the test id `gpu-env-<kind>` and `data-*`
 * attributes saying what it shows (for tests and styles). Its first child is
 * the `jp-GpuEnv-rowHeader` line: the row's name and its actions.
 */
import React, { forwardRef } from 'react';

/** Values of `data-*` attributes, by name without the `data-` prefix. */
export type DataAttributes = Record<string, string | number | boolean>;

/** `{ id: 3 }` as `{ 'data-id': '3' }`, to spread into an element's props. */
export function dataAttributes(data: DataAttributes): Record<string, string> {
  const attributes: Record<string, string> = {};
  for (const [key, value] of Object.entries(data)) {
    attributes[`data-${key}`] = String(value);
  }
  return attributes;
}

export interface IListRowProps {
  /** Names the class `jp-GpuEnv-<kind>` and the test id `gpu-env-<kind>`. */
  kind: string;
  data: DataAttributes;
  /** Extra class names, e.g. a highlight. */
  className?: string;
  children?: React.ReactNode;
}

export const ListRow = forwardRef<HTMLLIElement, IListRowProps>(
  (props, ref) => {
    const classes = ['jp-GpuEnv-row', `jp-GpuEnv-${props.kind}`];
    if (props.className) {
      classes.push(props.className);
    }
    return (
      <li
        ref={ref}
        className={classes.join(' ')}
        data-testid={`gpu-env-${props.kind}`}
        {...dataAttributes(props.data)}
      >
        {props.children}
      </li>
    );
  }
);
