import { render } from "preact";
import { App } from "./App";
import "./styles.css";
import { applyTheme, theme } from "./ui/theme";

applyTheme(theme.value);
matchMedia("(prefers-color-scheme: dark)").addEventListener("change", () => applyTheme(theme.value));
render(<App />, document.getElementById("app")!);
