import { fireEvent, render, screen } from '@testing-library/react';
import React, { useState } from 'react';

import { ExpandableRow, ExpandToggle, ListRow } from '../../src/components/row';

/** An ExpandableRow that keeps its own state, as the environments' does. */
function Row(props: { nameInToggle?: boolean; onToggle?: () => void }) {
  const [expanded, setExpanded] = useState(false);
  return (
    <ul>
      <ExpandableRow
        kind="thing"
        data={{ id: 7, name: 'alpha' }}
        expanded={expanded}
        onToggle={() => {
          props.onToggle?.();
          setExpanded(!expanded);
        }}
        toggle={{
          title: expanded ? 'Hide the parts' : 'Show the parts',
          controls: 'thing-7-parts',
          className: 'jp-GpuEnv-thingToggle'
        }}
        name={<span className="jp-GpuEnv-rowName">alpha</span>}
        nameInToggle={props.nameInToggle}
        header={<button type="button">act</button>}
        details={<div id="thing-7-parts">the parts</div>}
      >
        <div>always shown</div>
      </ExpandableRow>
    </ul>
  );
}

describe('ExpandableRow', () => {
  it('is a list row with its classes, test id and data attributes', () => {
    render(<Row />);
    const row = screen.getByTestId('gpu-env-thing');
    expect(row.tagName).toBe('LI');
    expect(row.className).toBe('jp-GpuEnv-row jp-GpuEnv-thing');
    expect(row.dataset.id).toBe('7');
    expect(row.dataset.name).toBe('alpha');
    expect(row.dataset.expanded).toBe('false');
    expect(row.firstElementChild?.className).toBe('jp-GpuEnv-rowHeader');
  });

  it('hides its details until the caret button is clicked, then shows them', () => {
    const onToggle = jest.fn();
    render(<Row onToggle={onToggle} />);
    const toggle = screen.getByTitle('Show the parts');
    expect(toggle.tagName).toBe('BUTTON');
    expect(toggle.getAttribute('type')).toBe('button');
    expect(toggle.className).toBe('jp-GpuEnv-envToggle jp-GpuEnv-thingToggle');
    expect(toggle.getAttribute('aria-controls')).toBe('thing-7-parts');
    expect(toggle.getAttribute('aria-expanded')).toBe('false');
    expect(screen.queryByText('the parts')).toBeNull();
    expect(screen.getByText('always shown')).toBeTruthy();

    fireEvent.click(toggle);
    expect(onToggle).toHaveBeenCalledTimes(1);
    expect(toggle.getAttribute('aria-expanded')).toBe('true');
    expect(toggle.title).toBe('Hide the parts');
    expect(screen.getByTestId('gpu-env-thing').dataset.expanded).toBe('true');
    const details = screen.getByText('the parts');
    expect(details.id).toBe('thing-7-parts');
    // The details come last, after the row's other children.
    expect(screen.getByTestId('gpu-env-thing').lastElementChild).toBe(details);

    fireEvent.click(toggle);
    expect(toggle.getAttribute('aria-expanded')).toBe('false');
    expect(screen.queryByText('the parts')).toBeNull();
  });

  it('puts the name beside the button, or in it (a click on it toggles)', () => {
    const { unmount } = render(<Row />);
    let name = screen.getByText('alpha');
    expect(name.closest('button')).toBeNull();
    expect(name.parentElement?.className).toBe('jp-GpuEnv-rowHeader');
    unmount();

    render(<Row nameInToggle />);
    name = screen.getByText('alpha');
    expect(name.closest('button')?.title).toBe('Show the parts');
    fireEvent.click(name);
    expect(screen.getByText('the parts')).toBeTruthy();
  });

  it("keeps the header's other content after the name", () => {
    render(<Row />);
    const header = screen.getByTestId('gpu-env-thing').firstElementChild!;
    const children = Array.from(header.children).map(e => e.textContent);
    expect(children).toEqual(['', 'alpha', 'act']);
  });
});

describe('ExpandToggle', () => {
  it('takes an accessible name and calls back on click', () => {
    const onToggle = jest.fn();
    render(
      <ExpandToggle
        expanded={true}
        onToggle={onToggle}
        title="Hide the runs"
        label="Hide the runs of s1"
      />
    );
    const button = screen.getByRole('button', { name: 'Hide the runs of s1' });
    expect(button.getAttribute('aria-expanded')).toBe('true');
    expect(button.hasAttribute('aria-controls')).toBe(false);
    fireEvent.click(button);
    expect(onToggle).toHaveBeenCalledTimes(1);
  });
});

describe('ListRow', () => {
  it('highlights itself and scrolls to itself only while highlighted', () => {
    const scrolled = jest.fn();
    Element.prototype.scrollIntoView = scrolled;
    const { rerender } = render(
      <ListRow kind="job" data={{ id: 'j1' }} highlighted={false} />
    );
    const row = screen.getByTestId('gpu-env-job');
    expect(row.classList.contains('jp-GpuEnv-row-highlighted')).toBe(false);
    expect(scrolled).not.toHaveBeenCalled();
    rerender(<ListRow kind="job" data={{ id: 'j1' }} highlighted={true} />);
    expect(row.classList.contains('jp-GpuEnv-row-highlighted')).toBe(true);
    expect(scrolled).toHaveBeenCalledWith({ block: 'nearest' });
  });
});
