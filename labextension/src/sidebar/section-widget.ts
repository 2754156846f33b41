/**
 * The body of a sidebar section: a React widget with the section's classes
 * and test id, which catches up whenever it is shown (sidebar opened,
 * section expanded), since its models stand by while it is hidden.
 */
import { ReactWidget } from '@jupyterlab/ui-components';
import { Message } from '@lumino/messaging';

export abstract class SectionWidget extends ReactWidget {
  /** `key` names the classes and test id: `jp-GpuEnv-<key>Section`. */
  constructor(key: string, label: string) {
    super();
    this.addClass('jp-GpuEnv-section');
    this.addClass(`jp-GpuEnv-${key}Section`);
    this.title.label = label;
    this.node.dataset.testid = `gpu-env-section-${key}`;
  }

  /** Called each time the section is shown: ask the server again. */
  protected abstract onShown(): void;

  protected override onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    this.onShown();
  }
}
