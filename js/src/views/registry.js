// The registry of views. A view is a module whose default export is
//   {id, label, title, create(ctx) -> {el, update(state, changed, active), canvas?, destroy?()}}
// and adding one is one line in views/index.js: `registerView(myView)`. The toolbar gets a tab for it
// (data-tab=id), its container carries data-view=id, the keys 1-9 follow the registration order, and
// the widget's `view` trait accepts its id. See docs/frontend.md ("Adding a view").
const REGISTRY = [];

/** Add a view (once per id; a second registration of the same id replaces the first). */
export function registerView(def) {
  if (!def || typeof def.id !== "string" || typeof def.create !== "function")
    throw new TypeError("a view needs {id, label, create(ctx)}");
  const i = REGISTRY.findIndex((v) => v.id === def.id);
  if (i >= 0) REGISTRY[i] = def;
  else REGISTRY.push(def);
}

/** The registered views, in registration order. */
export function registeredViews() {
  return REGISTRY.slice();
}
