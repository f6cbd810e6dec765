// The console's entry: styles and the app mounted into the page; browser (bundled by scripts/build_console.ts).
import { render } from "preact";
import { App } from "./app.tsx";
import "./console.css";

render(<App />, document.getElementById("app")!);
