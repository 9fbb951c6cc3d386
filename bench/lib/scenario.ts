import type { FigureInput } from './figures';

export interface ScenarioContext {
  /** Repetitions per timing (medians are reported). */
  runs: number;
  log(message: string): void;
}

export interface Scenario {
  name: string;
  title: string;
  run(ctx: ScenarioContext): Promise<FigureInput[]>;
}
