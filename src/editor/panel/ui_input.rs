//! Every input event counts, whatever the frame time. On a software
//! rasterizer a frame can take a second, and one frame's input then holds
//! what the user did over that second: keys typed and then a click, or a
//! button pressed and released. egui handles one pass per frame, so two
//! things go wrong without help:
//!
//! - keys typed into a field and a click on a button in the same pass: the
//!   click moves focus away from the field before the field reads the keys,
//!   so the path typed is cut short;
//! - a press and its release in different frames of a second each: egui
//!   measures the hold by frame times and, past its long-press limit, stops
//!   counting it as a click.
//!
//! [`split_raw_input`] cuts one frame's input into passes, in order, so that
//! each pointer press or release starts a pass of its own after any keys
//! before it, and [`configure_input`] turns off the long-press limit (a
//! desktop editor has no press-and-hold gesture).

/// Sets the context's input options: a press held for any time and then
/// released over a widget is a click.
pub fn configure_input(ctx: &egui::Context) {
    ctx.options_mut(|o| o.input_options.max_click_duration = f64::INFINITY);
}

/// Splits `raw` into passes to run in order: a pointer button event starts
/// a new pass when the pass so far holds keys or text, or another event of
/// that button (a press and its release never share a pass). Every pass
/// carries the frame's state (time, modifiers, screen); files dropped go
/// with the first. Input without such events stays one pass.
pub fn split_raw_input(mut raw: egui::RawInput) -> Vec<egui::RawInput> {
    let events = std::mem::take(&mut raw.events);
    let mut batches: Vec<Vec<egui::Event>> = vec![Vec::new()];
    for event in events {
        let starts_pass = match &event {
            egui::Event::PointerButton { button, .. } => {
                let current = batches.last().map_or(&[][..], Vec::as_slice);
                current.iter().any(|e| {
                    matches!(e, egui::Event::Key { .. } | egui::Event::Text(_))
                        || matches!(e, egui::Event::PointerButton { button: b, .. } if b == button)
                })
            }
            _ => false,
        };
        if starts_pass {
            batches.push(Vec::new());
        }
        if let Some(batch) = batches.last_mut() {
            batch.push(event);
        }
    }
    let mut passes = Vec::with_capacity(batches.len());
    for (i, events) in batches.into_iter().enumerate() {
        let mut pass = raw.clone();
        pass.events = events;
        if i > 0 {
            pass.dropped_files.clear();
            pass.hovered_files.clear();
        }
        passes.push(pass);
    }
    passes
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A window with a path field and a Save button, as the File menu's
    /// dialogs have; records what Save saved.
    struct Dialog {
        ctx: egui::Context,
        path: String,
        saved: Vec<String>,
        field: egui::Rect,
        button: egui::Rect,
        time: f64,
        split: bool,
    }

    impl Dialog {
        fn new(split: bool) -> Dialog {
            let ctx = egui::Context::default();
            if split {
                configure_input(&ctx);
            }
            let mut d = Dialog {
                ctx,
                path: "/tmp/strata_test".into(),
                saved: Vec::new(),
                field: egui::Rect::NOTHING,
                button: egui::Rect::NOTHING,
                time: 0.0,
                split,
            };
            d.frame(0.0, Vec::new());
            d
        }

        /// One frame `dt` seconds after the last, with `events`.
        fn frame(&mut self, dt: f64, events: Vec<egui::Event>) {
            self.time += dt;
            let raw = egui::RawInput {
                screen_rect: Some(egui::Rect::from_min_size(
                    egui::Pos2::ZERO,
                    egui::vec2(800.0, 600.0),
                )),
                time: Some(self.time),
                events,
                ..egui::RawInput::default()
            };
            let passes = if self.split {
                split_raw_input(raw)
            } else {
                vec![raw]
            };
            for pass in passes {
                let mut output = self.ctx.run_pass(pass, |ctx| {
                    ctx.root_ui(|root| {
                        egui::CentralPanel::default().show(root, |ui| {
                            self.field = ui.text_edit_singleline(&mut self.path).rect;
                            let save = ui.button("Save");
                            self.button = save.rect;
                            if save.clicked() {
                                self.saved.push(self.path.clone());
                            }
                        });
                    });
                });
                output.textures_delta.clear();
            }
        }

        fn press(&self, at: egui::Pos2, pressed: bool) -> egui::Event {
            egui::Event::PointerButton {
                pos: at,
                button: egui::PointerButton::Primary,
                pressed,
                modifiers: egui::Modifiers::NONE,
            }
        }
    }

    #[test]
    fn a_press_and_release_in_one_frame_is_a_click() {
        for split in [false, true] {
            let mut d = Dialog::new(split);
            let at = d.button.center();
            let events = vec![
                egui::Event::PointerMoved(at),
                d.press(at, true),
                d.press(at, false),
            ];
            d.frame(1.0, events);
            assert_eq!(
                d.saved,
                vec!["/tmp/strata_test".to_string()],
                "split {split}"
            );
        }
    }

    #[test]
    fn a_hold_of_0_9_s_across_slow_frames_is_a_click() {
        let mut d = Dialog::new(true);
        let at = d.button.center();
        d.frame(1.0, vec![egui::Event::PointerMoved(at), d.press(at, true)]);
        // The release comes 0.9 s later, in the next one-second frame.
        d.frame(0.9, vec![d.press(at, false)]);
        assert_eq!(d.saved.len(), 1);
        // Without the option a hold that long is not a click.
        let mut plain = Dialog::new(false);
        let at = plain.button.center();
        plain.frame(
            1.0,
            vec![egui::Event::PointerMoved(at), plain.press(at, true)],
        );
        plain.frame(0.9, vec![plain.press(at, false)]);
        assert!(plain.saved.is_empty(), "egui's default long-press limit");
    }

    /// Types "/box.glb" into the focused path field and clicks Save, all
    /// within one slow frame; returns what Save saved.
    fn type_then_save(split: bool) -> Vec<String> {
        let mut d = Dialog::new(split);
        // Focus the field.
        let field = d.field.center();
        let events = vec![
            egui::Event::PointerMoved(field),
            d.press(field, true),
            d.press(field, false),
        ];
        d.frame(1.0, events);
        // Type "/box.glb" and click Save, all within one slow frame.
        let at = d.button.center();
        let events = vec![
            egui::Event::Text("/box.glb".into()),
            egui::Event::PointerMoved(at),
            d.press(at, true),
            d.press(at, false),
        ];
        d.frame(1.0, events);
        d.saved
    }

    #[test]
    fn keys_typed_before_a_click_in_the_same_frame_all_reach_the_field() {
        assert_eq!(
            type_then_save(true),
            vec!["/tmp/strata_test/box.glb".to_string()]
        );
        // One pass for the frame cuts the path short (the input that failed).
        assert_eq!(type_then_save(false), vec!["/tmp/strata_test".to_string()]);
    }

    #[test]
    fn splitting_keeps_the_order_and_cuts_only_before_buttons() {
        let at = egui::pos2(1.0, 2.0);
        let button = |pressed| egui::Event::PointerButton {
            pos: at,
            button: egui::PointerButton::Primary,
            pressed,
            modifiers: egui::Modifiers::NONE,
        };
        let raw = egui::RawInput {
            time: Some(3.0),
            events: vec![
                egui::Event::PointerMoved(at),
                button(true),
                egui::Event::PointerMoved(at),
                button(false),
                egui::Event::Text("a".into()),
                button(true),
            ],
            ..egui::RawInput::default()
        };
        let passes = split_raw_input(raw);
        let lens: Vec<usize> = passes.iter().map(|p| p.events.len()).collect();
        assert_eq!(lens, vec![3, 2, 1]);
        assert!(passes.iter().all(|p| p.time == Some(3.0)));
        let plain = egui::RawInput {
            events: vec![
                egui::Event::Text("abc".into()),
                egui::Event::PointerMoved(at),
            ],
            ..egui::RawInput::default()
        };
        assert_eq!(split_raw_input(plain).len(), 1);
    }
}
