package edu.rice.hj.api;

/** Shim of habanero-java-lib's checked exception; nothing in this shim ever throws it. */
public class SuspendableException extends Exception {
    public SuspendableException() { super(); }
    public SuspendableException(String message) { super(message); }
}
