"""Clock tasks: alarms, the world clock, the timer and the stopwatch."""

from __future__ import annotations

from gui_envs.android.apps.clock import ALARM_LABELS, Clock, hhmm
from gui_envs.android.tasks.base import (
    AnswerTask,
    PlanStep,
    StateTask,
    open_app,
    search,
    stop,
    tap,
    type_into,
)

CLOCK = Clock.package


def _alarms(task: StateTask | AnswerTask) -> list[tuple[int, int, int, str, int]]:
    return [tuple(r) for r in task.rows("SELECT id, hour, minute, label, enabled FROM alarms ORDER BY id")]  # type: ignore[misc]


class AddAlarm(StateTask):
    name = "clock.add_alarm"
    app = CLOCK

    def setup(self) -> str:
        taken = {(h, m) for _, h, m, _, _ in _alarms(self)}
        while True:
            self.hour, self.minute = int(self.rng.integers(5, 23)), int(self.rng.choice([0, 10, 20, 40, 50]))
            if (self.hour, self.minute) not in taken:
                break
        self.label = self.pick(
            [x for x in ALARM_LABELS if x not in {a[3] for a in _alarms(self)}] or ["Alarm"]
        )
        self.may_add("alarms")
        return f"Set an alarm for {hhmm(self.hour, self.minute)} with the label '{self.label}'."

    def done(self) -> bool:
        return (
            self.state.one(
                CLOCK,
                "SELECT 1 FROM alarms WHERE hour = ? AND minute = ? AND label = ? COLLATE NOCASE AND enabled = 1",
                (self.hour, self.minute, self.label),
            )
            is not None
        )

    def oracle_plan(self) -> list[PlanStep]:
        return [
            open_app("Clock"),
            tap("Add alarm"),
            type_into("hour", str(self.hour)),
            type_into("minute", f"{self.minute:02d}"),
            type_into("label", self.label),
            tap(rid="action_save"),
        ]


class _OneAlarm(StateTask):
    app = CLOCK
    want_enabled: int = 0

    def setup(self) -> str:
        self.alarm_id, self.hour, self.minute, self.label, _ = self.pick(_alarms(self))
        self.execute("UPDATE alarms SET enabled = ? WHERE id = ?", (1 - self.want_enabled, self.alarm_id))
        self.may_edit("alarms", self.alarm_id, "enabled")
        return self.describe()

    def describe(self) -> str:
        raise NotImplementedError

    def done(self) -> bool:
        row = self.state.one(CLOCK, "SELECT enabled FROM alarms WHERE id = ?", (self.alarm_id,))
        return row is not None and row[0] == self.want_enabled

    def oracle_plan(self) -> list[PlanStep]:
        return [open_app("Clock"), tap(f"{self.label} {hhmm(self.hour, self.minute)}", role="Switch")]


class TurnOffAlarm(_OneAlarm):
    name = "clock.turn_off_alarm"
    want_enabled = 0

    def describe(self) -> str:
        return f"Turn off the {hhmm(self.hour, self.minute)} alarm."


class TurnOnAlarm(_OneAlarm):
    name = "clock.turn_on_alarm"
    want_enabled = 1

    def describe(self) -> str:
        return f"Switch on the '{self.label}' alarm."


class DeleteAlarm(StateTask):
    name = "clock.delete_alarm"
    app = CLOCK

    def setup(self) -> str:
        self.alarm_id, self.hour, self.minute, self.label, _ = self.pick(_alarms(self))
        self.may_delete("alarms", self.alarm_id)
        return f"Delete the {hhmm(self.hour, self.minute)} alarm."

    def done(self) -> bool:
        # Other alarms deleted on the way are side effects (StateTask.side_effects).
        return self.state.one(CLOCK, "SELECT 1 FROM alarms WHERE id = ?", (self.alarm_id,)) is None

    def oracle_plan(self) -> list[PlanStep]:
        return [
            open_app("Clock"),
            tap(hhmm(self.hour, self.minute), rid="alarm_row", contains=True),
            tap("Delete"),
        ]


class ChangeAlarmTime(StateTask):
    name = "clock.change_alarm_time"
    app = CLOCK

    def setup(self) -> str:
        self.alarm_id, hour, minute, self.label, _ = self.pick(_alarms(self))
        self.hour, self.minute = (
            (hour + 1 + int(self.rng.integers(3))) % 24,
            int(self.rng.choice([5, 25, 35, 55])),
        )
        self.may_edit("alarms", self.alarm_id, "hour", "minute")
        return f"Change the '{self.label}' alarm to {hhmm(self.hour, self.minute)}."

    def done(self) -> bool:
        row = self.state.one(CLOCK, "SELECT hour, minute FROM alarms WHERE id = ?", (self.alarm_id,))
        return row == (self.hour, self.minute)

    def oracle_plan(self) -> list[PlanStep]:
        return [
            open_app("Clock"),
            tap(self.label, rid="alarm_row", contains=True),
            type_into("hour", str(self.hour)),
            type_into("minute", f"{self.minute:02d}"),
            tap(rid="action_save"),
        ]


class StartTimer(StateTask):
    name = "clock.start_timer"
    app = CLOCK

    def setup(self) -> str:
        self.minutes = int(self.rng.choice([2, 3, 5, 10, 15, 25, 45]))
        self.may_edit("timer", 1, "seconds", "running")
        return f"Start a {self.minutes}-minute timer."

    def done(self) -> bool:
        return self.state.one(CLOCK, "SELECT seconds, running FROM timer WHERE id = 1") == (self.minutes * 60, 1)

    def oracle_plan(self) -> list[PlanStep]:
        return [
            open_app("Clock"),
            tap("Timer", rid="tab_timer"),
            type_into("minutes", str(self.minutes)),
            tap("Start"),
        ]


class StartStopwatch(StateTask):
    name = "clock.start_stopwatch"
    app = CLOCK

    def setup(self) -> str:
        self.laps = int(self.rng.integers(0, 3))
        self.may_edit("stopwatch", 1, "running", "laps")
        return (
            "Start the stopwatch." if not self.laps else f"Start the stopwatch and record {self.laps} lap(s)."
        )

    def done(self) -> bool:
        return self.state.one(CLOCK, "SELECT running, laps FROM stopwatch WHERE id = 1") == (1, self.laps)

    def oracle_plan(self) -> list[PlanStep]:
        return [open_app("Clock"), tap("Stopwatch", rid="tab_stopwatch"), tap("Start")] + [
            tap("Lap") for _ in range(self.laps)
        ]


class AddWorldCity(StateTask):
    name = "clock.add_city"
    app = CLOCK

    def setup(self) -> str:
        city_id, self.city = self.pick(self.rows("SELECT id, name FROM cities WHERE added = 0 ORDER BY id"))
        self.may_edit("cities", city_id, "added")
        return f"Add {self.city} to the world clock."

    def done(self) -> bool:
        return self.state.one(CLOCK, "SELECT added FROM cities WHERE name = ?", (self.city,)) == (1,)

    def oracle_plan(self) -> list[PlanStep]:
        return [
            open_app("Clock"),
            tap("Clock", rid="tab_clock"),
            tap("Add city"),
            *search(self.city),
            tap(self.city, rid="city"),
        ]


class CountEnabledAlarms(AnswerTask):
    name = "clock.count_enabled_alarms"
    app = CLOCK

    def setup(self) -> str:
        # The count is drawn uniformly over the candidates and the switches set to match: the seeded switches
        # (each on with chance 0.6) would make "2" right far more often than a blind guess.
        alarms = _alarms(self)
        on = int(self.rng.integers(len(alarms) + 1))
        chosen = {int(i) for i in self.rng.permutation(len(alarms))[:on]}
        for i, alarm in enumerate(alarms):
            self.execute("UPDATE alarms SET enabled = ? WHERE id = ?", (int(i in chosen), alarm[0]))
        self.reference_answer = str(on)
        return "How many alarms are switched on? Answer with a number."

    def candidates(self) -> list[str]:
        return [str(k) for k in range(len(_alarms(self)) + 1)]

    def oracle_plan(self) -> list[PlanStep]:
        return [open_app("Clock"), tap("Alarm", rid="tab_alarm"), stop(answer=self.reference_answer)]
