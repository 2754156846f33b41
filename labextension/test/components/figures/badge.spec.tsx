import { render, screen } from '@testing-library/react';
import React from 'react';

import { StateBadge } from '../../../src/components/figures/badge';

describe('StateBadge', () => {
  it("shows the state with its own tone and the job state's test id", () => {
    render(<StateBadge state="failed" />);
    const badge = screen.getByText('failed');
    expect(badge.className).toBe('jp-GpuEnv-badge');
    expect(badge.dataset.tone).toBe('error');
    expect(badge.dataset.testid).toBe('gpu-env-job-state');
  });

  it('gives a node state jobs do not have its tone (skipped)', () => {
    render(<StateBadge state="skipped" />);
    expect(screen.getByText('skipped').dataset.tone).toBe('warn');
  });

  it('leaves a state of no tone plain', () => {
    render(<StateBadge state="queued" />);
    expect(screen.getByText('queued').hasAttribute('data-tone')).toBe(false);
  });

  it('takes a label, a tone and a test id instead', () => {
    render(
      <StateBadge
        state="paused"
        label="paused"
        tone="warn"
        testId="gpu-env-schedule-state"
      />
    );
    const badge = screen.getByTestId('gpu-env-schedule-state');
    expect(badge.textContent).toBe('paused');
    expect(badge.dataset.tone).toBe('warn');
  });

  it('has no test id when told none', () => {
    const { container } = render(
      <StateBadge state="succeeded" testId={null} />
    );
    const badge = container.querySelector('.jp-GpuEnv-badge');
    expect(badge?.hasAttribute('data-testid')).toBe(false);
    expect(badge?.getAttribute('data-tone')).toBe('success');
  });
});
