/**
 * A row of a section's list (an environment, an image, a job): the classes
 * `jp-GpuEnv-row jp-GpuEnv-<kind>`, the test id `gpu-env-<kind>` and `data-*`
 * attributes saying what it shows (for tests and styles). Its first child is
 * the `jp-GpuEnv-rowHeader` line: the row's name and its actions.
 *
 * `ExpandableRow` is such a row whose header has a caret button that shows
 * and hides its details (an environment's packages, a sweep's or a
 * schedule's runs); `ExpandToggle` is that button alone, for the Jobs view's
 * table rows.
 */
import { caretDownIcon } from '@jupyterlab/ui-components';
import React, { useEffect, useRef } from 'react';

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
  /** Shown highlighted (`jp-GpuEnv-row-highlighted`) and scrolled to. */
  highlighted?: boolean;
  children?: React.ReactNode;
}

export function ListRow(props: IListRowProps): JSX.Element {
  const { highlighted } = props;
  const ref = useRef<HTMLLIElement>(null);
  useEffect(() => {
    if (highlighted) {
      // jsdom, where components are tested, has no scrollIntoView.
      ref.current?.scrollIntoView?.({ block: 'nearest' });
    }
  }, [highlighted]);
  const classes = ['jp-GpuEnv-row', `jp-GpuEnv-${props.kind}`];
  if (highlighted) {
    classes.push('jp-GpuEnv-row-highlighted');
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

export interface IExpandToggleProps {
  expanded: boolean;
  onToggle: () => void;
  /** The tooltip, saying what a click does now ("Show the runs"). */
  title: string;
  /** The accessible name, where the button has no text of its own. */
  label?: string;
  /** The id of the details it shows and hides. */
  controls?: string;
  /** A class beside `jp-GpuEnv-envToggle`. */
  className?: string;
  /** Beside the caret, e.g. the row's name (a click on it toggles too). */
  children?: React.ReactNode;
}

/** The caret button: pointing right while hidden, down while shown. */
export function ExpandToggle(props: IExpandToggleProps): JSX.Element {
  const { expanded } = props;
  return (
    <button
      type="button"
      className={['jp-GpuEnv-envToggle', props.className]
        .filter(Boolean)
        .join(' ')}
      aria-expanded={expanded}
      aria-controls={props.controls}
      aria-label={props.label}
      title={props.title}
      onClick={props.onToggle}
    >
      <caretDownIcon.react tag="span" className="jp-GpuEnv-envCaret" />
      {props.children}
    </button>
  );
}

export interface IExpandableRowProps extends IListRowProps {
  expanded: boolean;
  onToggle: () => void;
  /** The caret button's title, id of the details and class. */
  toggle: Pick<IExpandToggleProps, 'title' | 'controls' | 'className'>;
  /** The row's name on the header line, after the caret. */
  name: React.ReactNode;
  /** Whether the name is in the button (a click on it toggles). */
  nameInToggle?: boolean;
  /** The rest of the header line, e.g. the row's actions. */
  header?: React.ReactNode;
  /** Shown after the children while expanded (with the id `controls`). */
  details: React.ReactNode;
}

/**
 * A list row that expands: the header's caret button (`aria-expanded`,
 * `aria-controls`; Enter and Space toggle it as any button) and the
 * attribute `data-expanded`; the details last, only while expanded.
 */
export function ExpandableRow(props: IExpandableRowProps): JSX.Element {
  const {
    expanded,
    onToggle,
    toggle,
    name,
    nameInToggle,
    header,
    details,
    data,
    children,
    ...row
  } = props;
  return (
    <ListRow {...row} data={{ ...data, expanded }}>
      <div className="jp-GpuEnv-rowHeader">
        <ExpandToggle expanded={expanded} onToggle={onToggle} {...toggle}>
          {nameInToggle && name}
        </ExpandToggle>
        {!nameInToggle && name}
        {header}
      </div>
      {children}
      {expanded && details}
    </ListRow>
  );
}
