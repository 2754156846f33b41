import './base.css';
import './environments.css';
import './jobs.css';
import './jobs-view.css';
import './schedules.css';
import './gpu.css';
import './forms.css';
import './pipelines.css';
