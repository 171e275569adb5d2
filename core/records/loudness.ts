/**
 * What the normalize stage reports (docs/decisions.md#loudness): ITU-R BS.1770 / EBU R128 figures of the bytes it
 * stored and of the bytes it started from. A figure a clip does not have (no gated loudness, digital silence) is null.
 */
export interface LoudnessFigures {
  /** Integrated loudness, LUFS. */
  integratedLufs: number | null;
  /** True peak (4× oversampled), dBTP. */
  truePeakDbtp: number | null;
  /** Loudness range, LU. */
  rangeLu: number | null;
}

export interface Loudness extends LoudnessFigures {
  before: LoudnessFigures;
}
