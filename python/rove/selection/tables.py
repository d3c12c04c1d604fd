"""The thesis's tables, verbatim (Atxutegi 2018, chapter 6; ../shared/research/seed-002.md §2.10,
§2.11 and §5.2; checked against the thesis text in ../shared/seeds/).

Algorithms carry rove's ``cc`` names: the thesis's NewReno is Linux ``reno`` (rove ``reno``),
Westwood+ is ``westwood``. A use case is a (direction, speed) pair; its phases are
``PHASES[direction]`` (backward at 300 km/h has no constrained phase: ``phases_of``).
"""

from __future__ import annotations

from types import MappingProxyType

# The five candidates of the thesis's chapter 6 validation (§2.4), in its table order.
CANDIDATES = ("cubic", "reno", "bbr", "westwood", "illinois")
DISPLAY = MappingProxyType({"cubic": "CUBIC", "reno": "NewReno", "bbr": "BBR",
                            "westwood": "Westwood+", "illinois": "Illinois"})

LATENCIES = ("low", "4g")          # "low latency" (~18 ms) and "4G latency" (>= 68 ms)
DIRECTIONS = ("forward", "backward")
SPEEDS = (60, 120, 300)            # km/h, with EVA60, EVA120 and HST300 fading
CRITERIA = ("goodput", "pm", "delay")

PHASES = MappingProxyType({
    "forward": ("startup", "sustainer", "constrained"),
    "backward": ("startup", "constrained", "scaling"),
})

# The use cases in the order of the tables' columns (§5.2): F60 B60 F120 B120 F300 B300.
USE_CASES = tuple((d, s) for s in SPEEDS for d in DIRECTIONS)


def phases_of(direction: str, speed: int) -> tuple[str, ...]:
    """The phases of a use case; at 300 km/h backward only start-up and scaling (Table 6.8)."""
    if direction == "backward" and speed == 300:
        return ("startup", "scaling")
    return PHASES[direction]


def use_case_name(direction: str, speed: int) -> str:
    """``"F60"``, ``"B300"``, ...: the thesis's column names."""
    return f"{direction[0].upper()}{speed}"


# --------------------------------------------------------------------------------------------
# Table 6.1: Option 1, one algorithm chosen at set-up, per (speed, direction) and per
# (latency, criterion). None is the thesis's "*": several algorithms equally suitable.

_T61_COLUMNS = (("low", "goodput"), ("low", "pm"), ("low", "delay"),
                ("4g", "goodput"), ("4g", "pm"), ("4g", "delay"))
_T61_ROWS = {
    (60, "forward"): (None, "bbr", "westwood", "illinois", None, "reno"),
    (60, "backward"): ("cubic", "bbr", "bbr", "bbr", "cubic", "reno"),
    (120, "forward"): (None, "bbr", None, "bbr", None, "reno"),
    (120, "backward"): (None, "cubic", "cubic", "bbr", "bbr", "reno"),
    (300, "forward"): (None, "bbr", "bbr", "cubic", "cubic", None),
    (300, "backward"): ("reno", "reno", "bbr", "bbr", "cubic", None),
}
# (speed, direction, latency, criterion) -> cc name, or None for "*".
OPTION1 = MappingProxyType({
    (speed, direction, latency, criterion): entry
    for (speed, direction), row in _T61_ROWS.items()
    for (latency, criterion), entry in zip(_T61_COLUMNS, row)
})

# --------------------------------------------------------------------------------------------
# Table 6.8: Option 2, an algorithm per phase. Each entry lists the algorithm of every phase of
# the use case (a single algorithm in the thesis's cell is repeated over the phases: no switch).

_T68_COLUMNS = USE_CASES  # F60 B60 F120 B120 F300 B300
_T68_ROWS = {
    ("goodput", "low"): ("reno/reno/cubic", "reno/cubic/cubic", "illinois/illinois/bbr",
                         "cubic", "illinois", "reno"),
    ("goodput", "4g"): ("reno/illinois/cubic", "bbr", "bbr/bbr/illinois", "bbr",
                        "cubic/cubic/westwood", "bbr/illinois"),
    ("pm", "low"): ("bbr/bbr/westwood", "reno/bbr/bbr", "reno/bbr/bbr", "cubic",
                    "bbr/bbr/reno", "bbr/reno"),
    ("pm", "4g"): ("reno/reno/cubic", "illinois/cubic/cubic", "cubic/reno/illinois",
                   "westwood/bbr/bbr", "cubic", "bbr/cubic"),
    ("delay", "low"): ("westwood", "bbr", "reno/bbr/bbr", "cubic", "bbr/bbr/reno",
                       "westwood/bbr"),
    ("delay", "4g"): ("bbr/reno/cubic", "illinois/westwood/reno", "westwood/reno/reno",
                      "westwood", "cubic/cubic/reno", "reno/westwood"),
}


def _plan(cell: str, direction: str, speed: int) -> tuple[str, ...]:
    ccs = tuple(cell.split("/"))
    n = len(phases_of(direction, speed))
    return ccs * n if len(ccs) == 1 else ccs


# (criterion, latency, direction, speed) -> one cc per phase of phases_of(direction, speed).
OPTION2 = MappingProxyType({
    (criterion, latency, direction, speed): _plan(cell, direction, speed)
    for (criterion, latency), row in _T68_ROWS.items()
    for (direction, speed), cell in zip(_T68_COLUMNS, row)
})

# The thesis's count of Table 6.8's rows where Option 1 already was best (a single algorithm).
SINGLE_ALGORITHM_ROWS = 11

# The two rows the per-phase rule does not give, where the thesis kept one algorithm for "little
# room for improvements" (seed-002 §2.11): (criterion, latency, direction, speed) -> plan.
THESIS_OVERRIDES = MappingProxyType({
    ("goodput", "low", "forward", 300): ("illinois",) * 3,
    ("delay", "4g", "backward", 120): ("westwood",) * 3,
})

# --------------------------------------------------------------------------------------------
# Tables 6.2-6.7: the per-phase means measured on the Aeroflex emulator. Each row lists the 17
# phase columns F60 (SU, Sus, Con), B60 (SU, Con, Sca), F120 (...), B120 (...), F300 (...),
# B300 (SU, Sca); _table turns them into {(direction, speed): {cc: (value per phase)}}.


def _table(rows: dict) -> MappingProxyType:
    out: dict = {}
    for cc, values in rows.items():
        k = 0
        for direction, speed in USE_CASES:
            n = len(phases_of(direction, speed))
            out.setdefault((direction, speed), {})[cc] = tuple(values[k:k + n])
            k += n
        assert k == len(values) == 17, (cc, len(values))
    return MappingProxyType({uc: MappingProxyType(v) for uc, v in out.items()})


# Table 6.2: Goodput (Mbit/s) by phase, 4G latency.
GOODPUT_4G = _table({
    "cubic": (
        24.009775, 26.136320, 14.830030, 3.387359, 12.930881, 24.041202,
        18.765119, 18.690868, 2.464303, 0.992367, 1.274240, 12.974852,
        11.621652, 14.067320, 7.813408, 5.862473, 9.344234,
    ),
    "reno": (
        28.090239, 25.083221, 11.665474, 7.652201, 12.468487, 21.548364,
        15.421204, 17.864459, 2.616826, 1.224047, 1.946112, 13.985904,
        10.721961, 11.533803, 6.900203, 3.958836, 4.190898,
    ),
    "bbr": (
        19.104916, 28.319904, 12.821943, 9.847369, 15.045444, 26.498632,
        20.290345, 20.925741, 8.343183, 1.835103, 3.595545, 18.777123,
        10.779881, 9.727664, 4.845008, 7.371289, 9.320486,
    ),
    "westwood": (
        7.815343, 17.079562, 12.960179, 4.384548, 10.493897, 18.734572,
        9.653337, 16.781103, 7.221466, 0.583065, 1.763342, 16.113730,
        4.674148, 9.537976, 8.809632, 2.868975, 8.517715,
    ),
    "illinois": (
        22.793455, 28.917083, 13.839019, 8.665801, 12.762431, 25.633693,
        14.300452, 18.848679, 8.883770, 0.504873, 0.904839, 14.456446,
        9.738287, 13.268989, 6.051675, 4.799641, 9.773614,
    ),
})

# Table 6.3: PM (alpha = beta = gamma = 1, Eq. 6.1) by phase, 4G latency.
PM_4G = _table({
    "cubic": (
        0.849943, 0.876508, 0.891923, 0.683201, 0.857607, 0.878203,
        0.896179, 0.834193, 0.654994, 0.760316, 0.695770, 0.814306,
        0.938419, 0.918043, 0.861951, 0.843963, 0.882451,
    ),
    "reno": (
        0.912654, 0.882414, 0.819121, 0.835962, 0.842523, 0.865342,
        0.838534, 0.847879, 0.670324, 0.754736, 0.761508, 0.836605,
        0.887811, 0.855712, 0.848949, 0.806045, 0.743098,
    ),
    "bbr": (
        0.850915, 0.848214, 0.777470, 0.873315, 0.852180, 0.843479,
        0.895338, 0.803627, 0.756128, 0.785263, 0.825925, 0.871402,
        0.869097, 0.775462, 0.781257, 0.852164, 0.766925,
    ),
    "westwood": (
        0.777437, 0.793647, 0.819489, 0.787850, 0.821990, 0.806111,
        0.809043, 0.833051, 0.759766, 0.897523, 0.745392, 0.866068,
        0.773913, 0.837580, 0.855491, 0.743528, 0.861353,
    ),
    "illinois": (
        0.851940, 0.879932, 0.809620, 0.915885, 0.793931, 0.843218,
        0.809144, 0.818351, 0.809439, 0.695083, 0.639612, 0.796268,
        0.864424, 0.857447, 0.776710, 0.813088, 0.821311,
    ),
})

# Table 6.4: Delay-weighted PM (beta = 10, Eq. 6.2) by phase, 4G latency.
DELAY_PM_4G = _table({
    "cubic": (
        0.799446, 0.845469, 0.813768, 0.592770, 0.803300, 0.860929,
        0.836000, 0.787821, 0.708692, 0.670766, 0.686524, 0.854401,
        0.920120, 0.846501, 0.791107, 0.712600, 0.842064,
    ),
    "reno": (
        0.816017, 0.874937, 0.773247, 0.805448, 0.778506, 0.883127,
        0.809080, 0.841098, 0.731668, 0.602877, 0.709772, 0.867863,
        0.834684, 0.818346, 0.819236, 0.833584, 0.807253,
    ),
    "bbr": (
        0.836482, 0.734044, 0.617415, 0.802198, 0.701656, 0.724915,
        0.793805, 0.644438, 0.565446, 0.613775, 0.643117, 0.726863,
        0.784755, 0.702728, 0.740885, 0.689073, 0.704949,
    ),
    "westwood": (
        0.747761, 0.799672, 0.716216, 0.773306, 0.828443, 0.783157,
        0.836728, 0.794574, 0.648897, 0.711000, 0.717744, 0.856081,
        0.801269, 0.848013, 0.700408, 0.717692, 0.848167,
    ),
    "illinois": (
        0.815272, 0.795255, 0.655601, 0.819894, 0.652101, 0.731117,
        0.733149, 0.703924, 0.661405, 0.563740, 0.611162, 0.693713,
        0.794962, 0.733246, 0.700603, 0.694632, 0.677870,
    ),
})

# Table 6.5: Goodput (Mbit/s) by phase, low latency.
GOODPUT_LL = _table({
    "cubic": (
        37.142169, 30.301331, 16.224357, 8.629119, 17.098225, 30.770695,
        19.866564, 17.823915, 2.176634, 2.460639, 5.040327, 21.456039,
        11.344601, 11.462609, 4.764885, 6.465807, 12.993194,
    ),
    "reno": (
        37.986836, 30.949793, 15.919119, 11.330121, 14.295380, 27.125017,
        25.277257, 17.420741, 2.392096, 2.054233, 4.172171, 21.201964,
        15.636473, 16.986488, 11.162149, 8.073087, 13.302486,
    ),
    "bbr": (
        36.147876, 31.124277, 15.515030, 9.159087, 15.774271, 29.320803,
        23.251023, 20.607936, 8.538180, 2.124703, 3.813710, 16.543342,
        15.583380, 16.039255, 8.205333, 8.042196, 9.612789,
    ),
    "westwood": (
        12.991460, 16.790566, 16.206402, 8.159967, 14.568328, 21.698994,
        9.847369, 12.715790, 3.787582, 1.438351, 2.842585, 17.176446,
        12.076324, 16.434800, 10.142757, 6.291081, 8.467711,
    ),
    "illinois": (
        35.300313, 30.455422, 15.915065, 10.241225, 16.503821, 25.519282,
        26.406697, 21.185457, 6.837649, 2.234751, 3.627723, 15.001126,
        16.987940, 16.685304, 11.163115, 7.791209, 12.189650,
    ),
})

# Table 6.6: PM by phase, low latency.
PM_LL = _table({
    "cubic": (
        0.758045, 0.737830, 0.703463, 0.667170, 0.732906, 0.741479,
        0.751858, 0.695220, 0.317016, 0.721686, 0.795992, 0.814020,
        0.690527, 0.676068, 0.575745, 0.675523, 0.762844,
    ),
    "reno": (
        0.763244, 0.742894, 0.691693, 0.787842, 0.680377, 0.739558,
        0.854650, 0.735939, 0.573044, 0.407003, 0.707917, 0.775353,
        0.787205, 0.777678, 0.774813, 0.737796, 0.785499,
    ),
    "bbr": (
        0.770395, 0.770336, 0.699342, 0.772034, 0.756842, 0.786409,
        0.749019, 0.788840, 0.753223, 0.429354, 0.609983, 0.728104,
        0.843191, 0.800826, 0.701898, 0.776660, 0.716589,
    ),
    "westwood": (
        0.641814, 0.671816, 0.762163, 0.769376, 0.720482, 0.725650,
        0.670600, 0.684644, 0.598438, 0.603689, 0.629479, 0.726192,
        0.768491, 0.750220, 0.717286, 0.763179, 0.686771,
    ),
    "illinois": (
        0.754114, 0.724560, 0.676425, 0.708591, 0.715221, 0.679328,
        0.812229, 0.756434, 0.670048, 0.720031, 0.563309, 0.640193,
        0.780000, 0.718355, 0.719365, 0.743782, 0.731849,
    ),
})

# Table 6.7: Delay-weighted PM by phase, low latency.
DELAY_PM_LL = _table({
    "cubic": (
        0.493066, 0.446795, 0.385195, 0.383722, 0.389045, 0.428689,
        0.585520, 0.407352, 0.302067, 0.450910, 0.586674, 0.565590,
        0.496265, 0.480522, 0.387878, 0.412978, 0.489973,
    ),
    "reno": (
        0.491156, 0.442214, 0.373219, 0.508341, 0.377607, 0.485950,
        0.632849, 0.523055, 0.414922, 0.305750, 0.471540, 0.476703,
        0.558254, 0.510472, 0.512038, 0.464944, 0.519911,
    ),
    "bbr": (
        0.532021, 0.516794, 0.405650, 0.643308, 0.505665, 0.572276,
        0.490204, 0.526370, 0.426877, 0.323457, 0.313780, 0.509598,
        0.732198, 0.623331, 0.508670, 0.528186, 0.537836,
    ),
    "westwood": (
        0.565231, 0.520792, 0.523778, 0.574969, 0.462053, 0.557967,
        0.549843, 0.515622, 0.380573, 0.392795, 0.434547, 0.490980,
        0.614074, 0.466800, 0.412867, 0.604662, 0.510420,
    ),
    "illinois": (
        0.465040, 0.409700, 0.338620, 0.413637, 0.374087, 0.363800,
        0.512439, 0.425080, 0.345400, 0.368079, 0.260921, 0.335248,
        0.462019, 0.383570, 0.378451, 0.460401, 0.436021,
    ),
})
# (criterion, latency) -> the table measuring it.
PHASE_TABLES = MappingProxyType({
    ("goodput", "4g"): GOODPUT_4G, ("pm", "4g"): PM_4G, ("delay", "4g"): DELAY_PM_4G,
    ("goodput", "low"): GOODPUT_LL, ("pm", "low"): PM_LL, ("delay", "low"): DELAY_PM_LL,
})
