/**
 * The plan of a package change (made by `./planning.ts`), shown before
 * anything changes: what is installed, upgraded, downgraded and removed,
 * what must be downloaded, and what the user did not name. Removals the user
 * did not name need an explicit tick before Apply is possible. The plan of a
 * new environment made from a file is shown the same way (every change an
 * install).
 */
import { Dialog, showDialog } from '@jupyterlab/apputils';
import { Widget } from '@lumino/widgets';

import { h } from '../../components/form';
import type { IPackagesPlan } from '../../api/types';
import { isUnrequestedRemoval, planCells, planSummary } from './plan-lines';

/** The classes of a plan row's cells: the verb's and the download's. */
const CELL_CLASSES = [
  'jp-GpuEnv-planAction',
  undefined,
  undefined,
  undefined,
  'jp-GpuEnv-planSize'
];

/** The plan as a table, its warnings, and the tick for unnamed removals. */
export class PlanBody extends Widget implements Dialog.IBodyWidget<boolean> {
  constructor(plan: IPackagesPlan) {
    super({
      node: h('div', { class: 'jp-GpuEnv-plan', 'data-testid': 'gpu-env-plan' })
    });
    for (const warning of plan.warnings) {
      this.node.append(
        h('p', { class: 'jp-GpuEnv-planWarning', role: 'alert' }, warning)
      );
    }
    const rows = plan.changes.map(change =>
      h(
        'tr',
        {
          class: `jp-GpuEnv-plan-${change.action}`,
          'data-unrequested': isUnrequestedRemoval(change) ? 'true' : undefined
        },
        ...planCells(change).map((text, i) =>
          h('td', { class: CELL_CLASSES[i] }, text)
        )
      )
    );
    const head = h(
      'tr',
      {},
      ...['', 'package', 'from', 'version', 'download'].map(t => h('th', {}, t))
    );
    this.node.append(
      h(
        'table',
        { class: 'jp-GpuEnv-planTable' },
        h('thead', {}, head),
        h('tbody', {}, ...rows)
      ),
      h('p', { class: 'jp-GpuEnv-fieldHint' }, planSummary(plan))
    );
    if (plan.unrequested_removals.length > 0) {
      this._confirm = h('input', {
        type: 'checkbox',
        'data-testid': 'gpu-env-plan-confirm'
      });
      this._confirm.addEventListener('change', () => this._enableApply());
      this.node.append(
        h(
          'label',
          { class: 'jp-GpuEnv-planConfirm' },
          this._confirm,
          ` Also remove ${plan.unrequested_removals.join(', ')}, which I did not pick`
        )
      );
    }
  }

  getValue(): boolean {
    return this._confirm === null || this._confirm.checked;
  }

  protected override onAfterAttach(): void {
    this._enableApply();
  }

  /** Apply stays disabled until unnamed removals are confirmed. */
  private _enableApply(): void {
    const dialog = this.node.closest('.jp-Dialog-content');
    const apply = dialog?.querySelector<HTMLButtonElement>('.jp-mod-accept');
    if (apply) {
      apply.disabled = !this.getValue();
    }
  }

  private _confirm: HTMLInputElement | null = null;
}

/**
 * Show `plan` for the user to review; answers whether they chose to go on
 * (`apply` is the accept button's label: "Apply", "Create").
 */
export async function confirmPlan(
  plan: IPackagesPlan,
  title: string,
  apply: string
): Promise<boolean> {
  const result = await showDialog({
    title,
    body: new PlanBody(plan),
    buttons: [
      Dialog.cancelButton({ label: 'Back out' }),
      Dialog.okButton({ label: apply })
    ]
  });
  return result.button.accept && result.value === true;
}
