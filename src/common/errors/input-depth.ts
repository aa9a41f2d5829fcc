/** Bodies and queries nested deeper than this are refused before anything walks them recursively. */
export const MAX_INPUT_DEPTH = 32;
export const TOO_DEEP = `must not be nested more than ${MAX_INPUT_DEPTH} levels deep`;
