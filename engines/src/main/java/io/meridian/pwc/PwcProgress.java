package io.meridian.pwc;

/**
 * Called by {@link PwcEngine} after every EM iteration and every power-method iteration, from the engine's thread.
 * Implementations read what they need from the engine's getters and must not block; the engine allocates nothing
 * for the call, so a listener that wants zero allocation must not allocate either (e.g. print only every second).
 */
@FunctionalInterface
public interface PwcProgress {
    PwcProgress NONE = engine -> { };

    void update(PwcEngine engine);
}
